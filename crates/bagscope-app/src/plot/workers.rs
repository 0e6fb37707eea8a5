//! The workers that read plotted series: a field's (points handed over as the chunks come),
//! an expression's, a script's; and reading them again when a live recording grows.

use egui_plot::PlotPoint;

use super::super::job::Job;
use super::super::Doc;
use super::{expr, script, Part};
use bagscope_reader::encoding::FieldPath;
use bagscope_reader::series::field_series;

/// The worker that makes series `path`: a script's, a field's or an expression's.
pub(super) fn job_for(
    d: &Doc,
    path: &str,
    header_time: bool,
    ctx: &egui::Context,
) -> Result<Job<Part>, String> {
    if script::makes(&d.plots.scripts, path) {
        return script::spawn(&d.rec.bag, &d.plots.scripts, path, ctx);
    }
    let e = bagscope_reader::expr::Expr::parse(path).map_err(|e| e.to_string())?;
    for t in e.topics() {
        if d.rec.bag.summary().topic(t).is_none() {
            return Err(format!("no topic {t:?} in the bag"));
        }
    }
    // Compile now so a bad path is reported at once, not by the worker.
    let vars = expr::parse_vars(&d.plots.vars)?;
    expr::check(&d.rec.bag, &e, &vars)?;
    match expr::field_path(&e).filter(|_| !header_time) {
        Some(fp) => spawn_series(&d.rec.bag, fp, ctx),
        None => {
            let env = expr::env_of(&d.plots.names(), &vars, d.plots.interp(), &e)?;
            expr::spawn(&d.rec.bag, e, env, header_time, ctx)
        }
    }
}

/// Reads series `i` again (its time base changed).
pub(super) fn restart(d: &mut Doc, i: usize, ctx: &egui::Context) {
    let Some(s) = d.plots.series.get(i) else {
        return;
    };
    let (path, header) = (s.path.clone(), s.header_time);
    let job = job_for(d, &path, header, ctx);
    let s = &mut d.plots.series[i];
    s.points.clear();
    s.pyramid = None;
    s.built = None;
    s.cache = None;
    s.incoming = None;
    s.done = false;
    s.note = None;
    match job {
        Ok(j) => s.job = Some(j),
        Err(e) => {
            s.done = true;
            s.note = Some(e);
        }
    }
}

/// A worker extracting `fp` from `bag`.
fn spawn_series(
    bag: &bagscope_reader::Bag,
    fp: FieldPath,
    ctx: &egui::Context,
) -> Result<Job<Part>, String> {
    let bag = bag.clone();
    let start = bag.summary().start_ns.unwrap_or(0);
    Job::spawn("series", 64, ctx, move |h| {
        let threads = bag.options().threads();
        let send = |pts: &[bagscope_reader::series::Point]| {
            let v: Vec<PlotPoint> = pts
                .iter()
                .filter_map(|p| {
                    p.value
                        .as_f64()
                        .map(|y| PlotPoint::new((p.time_ns.saturating_sub(start)) as f64 / 1e9, y))
                })
                .collect();
            // Waits when the UI is behind: the channel is bounded.
            h.send(Part::Points(v));
        };
        let r = field_series(&bag, &fp, None, None, threads, h.cancel_flag(), &send);
        h.send(Part::Done(
            r.map(|s| (s.missing, s.problems))
                .map_err(|e| e.to_string()),
        ));
    })
}

/// Extracts every field series again from the recording just reloaded (a live recording
/// grew): the points shown stay until the new ones are all read (and stay if the reading
/// fails). Series made from points at hand (stamp delays, tracks) stay as they are.
pub fn refresh(d: &mut Doc, ctx: &egui::Context) {
    let bag = d.rec.bag.clone();
    let others = d.plots.names();
    let vars = expr::parse_vars(&d.plots.vars).unwrap_or_default();
    let interp = d.plots.interp();
    let scripts = d.plots.scripts.clone();
    for s in d.plots.series.iter_mut().filter(|s| !s.derived) {
        let job = if script::makes(&scripts, &s.path) {
            script::spawn(&bag, &scripts, &s.path, ctx)
        } else {
            let Ok(e) = bagscope_reader::expr::Expr::parse(&s.path) else {
                continue;
            };
            if e.paths().is_empty() || e.topics().iter().any(|t| bag.summary().topic(t).is_none()) {
                continue;
            }
            match expr::field_path(&e).filter(|_| !s.header_time) {
                Some(fp) => spawn_series(&bag, fp, ctx),
                None => expr::env_of(&others, &vars, interp, &e)
                    .and_then(|env| expr::spawn(&bag, e, env, s.header_time, ctx)),
            }
        };
        match job {
            Ok(j) => {
                // A series still being read the first time starts over; a complete one keeps
                // its points until the new ones are in.
                if s.done {
                    s.incoming = Some(Vec::new());
                } else {
                    s.points.clear();
                }
                s.job = Some(j);
            }
            Err(e) => s.note = Some(e),
        }
    }
}
