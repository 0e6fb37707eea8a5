//! XY plots, written `Y vs X` in the path box: one expression against another over the whole
//! recording (a trajectory: `/odom.pose.pose.position.y vs /odom.pose.pose.position.x`), or an
//! array at the playhead against its index or another array of the same message (a scan:
//! `/scan.ranges[:] vs index`; a path: `/plan.poses[:].pose.position.y vs
//! /plan.poses[:].pose.position.x`), read again on a worker when the playhead reaches another
//! message.

use egui::Color32;
use egui_plot::{Line, Plot, PlotPoint, PlotPoints, Points};

use super::super::job::Job;
use super::super::Doc;
use bagscope_reader::expr::{Expr, Seg};
use bagscope_reader::series::{expr_series, Env};

/// What an XY worker sends: the points, or why there are none.
pub(super) type XyPart = Result<Vec<PlotPoint>, String>;

/// One XY series.
pub struct XySeries {
    /// As typed (`Y vs X`).
    pub text: String,
    y: Expr,
    /// `None`: against the index.
    x: Option<Expr>,
    /// An array at the playhead, not a series over time.
    pub at_playhead: bool,
    /// The points drawn.
    pub points: Vec<PlotPoint>,
    /// The message (its time) the points are of, for one at the playhead.
    shown_at: Option<u64>,
    job: Option<Job<XyPart>>,
    /// Why the last reading failed.
    pub note: Option<String>,
    color: Color32,
    /// The variables it was added with.
    env: Env,
}

/// `Y vs X` split (outside brackets), when the text is written so.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let i = text.find(" vs ")?;
    Some((text[..i].trim(), text[i + 4..].trim()))
}

fn has_slice(e: &Expr) -> bool {
    e.paths().iter().any(|p| {
        p.segs
            .iter()
            .any(|s| matches!(s, Seg::Slice { single: false, .. }))
    })
}

/// Adds the XY series `text` (`Y vs X`).
pub fn add(d: &mut Doc, text: &str, ctx: &egui::Context) -> Result<(), String> {
    let (ys, xs) = split(text).ok_or("an XY plot is written Y vs X")?;
    let env = Env {
        vars: super::expr::parse_vars(&d.plots.vars)?,
        interp: d.plots.interp(),
        ..Env::default()
    };
    // A side that is a script's series: both sides read on one worker, the scripts run there.
    let scripted = |t: &str| super::script::makes(&d.plots.scripts, t);
    if scripted(ys) || scripted(xs) {
        let job = super::script::spawn_xy(&d.rec.bag, &d.plots.scripts, (ys, xs), &env, ctx)?;
        let n = d.plots.xy.len();
        let text_of = |t: &str| Expr {
            text: t.to_string(),
            root: bagscope_reader::expr::Node::Num(f64::NAN),
        };
        d.plots.xy.push(XySeries {
            text: text.to_string(),
            y: text_of(ys),
            x: (xs != "index").then(|| text_of(xs)),
            at_playhead: false,
            points: Vec::new(),
            shown_at: None,
            job: Some(job),
            note: None,
            color: super::PALETTE[(n + 3) % super::PALETTE.len()],
            env,
        });
        return Ok(());
    }
    let y = Expr::parse(ys).map_err(|e| e.to_string())?;
    let x = match xs {
        "index" => None,
        _ => Some(Expr::parse(xs).map_err(|e| e.to_string())?),
    };
    for e in std::iter::once(&y).chain(&x) {
        for t in e.topics() {
            if d.rec.bag.summary().topic(t).is_none() {
                return Err(format!("no topic {t:?} in the bag"));
            }
        }
        super::expr::check(&d.rec.bag, e, &env.vars)?;
    }
    let at_playhead = x.is_none() || has_slice(&y) || x.as_ref().is_some_and(has_slice);
    if at_playhead {
        let one = |e: &Expr| e.plain_path().map(|p| p.topic.clone());
        let ty = one(&y).ok_or("an array at the playhead is one path (no modifier or formula)")?;
        if let Some(x) = &x {
            if one(x).as_deref() != Some(ty.as_str()) {
                return Err(format!(
                    "the two arrays are read from one message: give X on {ty} too, or `index`"
                ));
            }
        }
    }
    let n = d.plots.xy.len();
    let mut s = XySeries {
        text: text.to_string(),
        y,
        x,
        at_playhead,
        points: Vec::new(),
        shown_at: None,
        job: None,
        note: None,
        color: super::PALETTE[(n + 3) % super::PALETTE.len()],
        env,
    };
    if !at_playhead {
        s.job = Some(spawn(&d.rec.bag, &s, None, ctx)?);
    }
    d.plots.xy.push(s);
    Ok(())
}

/// A worker reading `s`'s points: the series over `window`, or the whole recording.
fn spawn(
    bag: &bagscope_reader::Bag,
    s: &XySeries,
    window: Option<(u64, u64)>,
    ctx: &egui::Context,
) -> Result<Job<XyPart>, String> {
    let bag = bag.clone();
    let exprs: Vec<Expr> = std::iter::once(s.y.clone()).chain(s.x.clone()).collect();
    let at_playhead = s.at_playhead;
    let env = s.env.clone();
    Job::spawn("xy", 1, ctx, move |h| {
        let threads = bag.options().threads();
        let w = window.map_or((None, None), |(a, b)| (Some(a), Some(b)));
        let r = expr_series(&bag, &exprs, &env, w, threads, h.cancel_flag())
            .map_err(|e| e.to_string())
            .map(|v| {
                let num = |s: &bagscope_reader::series::Series| -> Vec<(u64, f64)> {
                    s.points
                        .iter()
                        .map(|p| (p.time_ns, p.value.as_f64().unwrap_or(f64::NAN)))
                        .collect()
                };
                let y = num(&v[0]);
                match v.get(1).map(num) {
                    // The elements of one message: pairs in order.
                    Some(x) if at_playhead => pairs(x.iter().zip(&y).map(|(a, b)| (a.1, b.1))),
                    Some(x) => pairs(on_union(&x, &y)),
                    None => pairs(y.iter().enumerate().map(|(i, p)| (i as f64, p.1))),
                }
            });
        h.send(r);
    })
}

pub(super) fn pairs(it: impl Iterator<Item = (f64, f64)>) -> Vec<PlotPoint> {
    it.filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|(x, y)| PlotPoint::new(x, y))
        .collect()
}

/// (x, y) at the union of the two series' times, each holding its last value.
pub(super) fn on_union<'a>(
    x: &'a [(u64, f64)],
    y: &'a [(u64, f64)],
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let (mut i, mut j) = (0usize, 0usize);
    std::iter::from_fn(move || {
        let t = match (x.get(i), y.get(j)) {
            (Some(a), Some(b)) => a.0.min(b.0),
            (Some(a), None) => a.0,
            (None, Some(b)) => b.0,
            (None, None) => return None,
        };
        while x.get(i).is_some_and(|p| p.0 <= t) {
            i += 1;
        }
        while y.get(j).is_some_and(|p| p.0 <= t) {
            j += 1;
        }
        let at = |s: &[(u64, f64)], k: usize| k.checked_sub(1).map_or(f64::NAN, |k| s[k].1);
        Some((at(x, i), at(y, j)))
    })
}

/// Takes what the workers sent; starts a reading of each array at the playhead whose message
/// changed.
pub fn poll(d: &mut Doc, ctx: &egui::Context) {
    let playhead = d.nav.playhead;
    let tables = d.rec.indexed.as_ref().map(|i| i.tables.clone());
    for s in &mut d.plots.xy {
        if let Some(job) = &mut s.job {
            match job.take() {
                Some(Ok(p)) => {
                    s.points = p;
                    s.note = None;
                    s.job = None;
                }
                Some(Err(e)) => {
                    s.note = Some(e);
                    s.job = None;
                }
                None if job.ended() => s.job = None,
                None => continue,
            }
        }
        if !s.at_playhead {
            continue;
        }
        let (Some(tables), Some(p)) = (&tables, s.y.plain_path()) else {
            continue;
        };
        let Some(topic) = d.rec.bag.summary().topic(&p.topic) else {
            continue;
        };
        let Some((_, e)) = tables.last_at(topic, playhead) else {
            s.points.clear();
            continue;
        };
        if s.shown_at != Some(e.time_ns) {
            s.shown_at = Some(e.time_ns);
            match spawn(&d.rec.bag, s, Some((e.time_ns, e.time_ns + 1)), ctx) {
                Ok(j) => s.job = Some(j),
                Err(err) => s.note = Some(err),
            }
        }
    }
}

/// The XY plots, one each, below the time plots.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, h: f32) {
    let mut remove = None;
    for (i, s) in d.plots.xy.iter().enumerate() {
        ui.horizontal(|ui| {
            let (r, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().rect_filled(r, 2.0, s.color);
            ui.label(&s.text);
            ui.weak(if s.at_playhead {
                format!("{} points at the playhead", s.points.len())
            } else {
                format!("{} points", s.points.len())
            });
            if s.job.is_some() {
                ui.spinner();
            }
            if let Some(n) = &s.note {
                ui.colored_label(ui.visuals().warn_fg_color, n);
            }
            if ui.small_button("Remove").clicked() {
                remove = Some(i);
            }
        });
        let (ys, xs) = split(&s.text).unwrap_or(("y", "x"));
        Plot::new(("xy", i))
            .height(h)
            .x_axis_label(xs.to_string())
            .y_axis_label(ys.to_string())
            .show(ui, |p| {
                let pts = PlotPoints::Borrowed(&s.points);
                if s.at_playhead {
                    p.points(Points::new(s.text.clone(), pts).color(s.color).radius(1.5));
                } else {
                    p.line(Line::new(s.text.clone(), pts).color(s.color));
                }
            });
    }
    if let Some(i) = remove {
        d.plots.xy.remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_on_the_union_hold_each_side() {
        let x = [(10, 1.0), (30, 3.0)];
        let y = [(20, 20.0), (30, 30.0), (40, 40.0)];
        let got: Vec<(f64, f64)> = on_union(&x, &y).collect();
        assert!(got[0].0 == 1.0 && got[0].1.is_nan());
        assert_eq!(&got[1..], &[(1.0, 20.0), (3.0, 30.0), (3.0, 40.0)]);
        assert_eq!(split("/a.y vs /a.x"), Some(("/a.y", "/a.x")));
        assert_eq!(
            split("/scan.ranges[:] vs index"),
            Some(("/scan.ranges[:]", "index"))
        );
    }
}
