//! Plotted series that a script makes (a layout's custom series, PlotJuggler's snippets run):
//! the script, and those it reads, run on a worker; its error (script, line, time) is the
//! series' note.

use super::super::job::Job;
use super::Part;
use bagscope_ops::script::{self, Limits, SeriesScript};
use bagscope_reader::series::Env;

pub(super) use bagscope_ops::script::makes;

/// A worker running what makes series `name`: its points (x: seconds since the start).
pub(super) fn spawn(
    bag: &bagscope_reader::Bag,
    scripts: &[SeriesScript],
    name: &str,
    ctx: &egui::Context,
) -> Result<Job<Part>, String> {
    let scripts = script::eval::needed(scripts, &[name]);
    let env = Env::default();
    // Sources that are not in the recording, Lua that does not parse: said at once.
    if let Some(e) = script::check(bag, &scripts, &env).into_iter().next() {
        return Err(e.to_string());
    }
    let (bag, name) = (bag.clone(), name.to_string());
    let start = bag.summary().start_ns.unwrap_or(0);
    Job::spawn("script", 64, ctx, move |h| {
        let r = script::evaluate(
            &bag,
            &scripts,
            &env,
            (None, None),
            Limits::default(),
            h.cancel_flag(),
        );
        let runs = match r {
            Ok(runs) => runs,
            Err(e) => {
                h.send(Part::Done(Err(e.to_string())));
                return;
            }
        };
        let mut notes = Vec::new();
        let mut found = None;
        for run in runs {
            match run {
                Ok(run) => {
                    notes.extend(run.notes);
                    notes.extend(run.printed.into_iter().map(|p| format!("printed: {p}")));
                    if let Some(s) = run.series.into_iter().find(|s| s.name == name) {
                        found = Some(s);
                    }
                }
                Err(e) => {
                    h.send(Part::Done(Err(e.to_string())));
                    return;
                }
            }
        }
        let Some(s) = found else {
            h.send(Part::Done(Err(format!("no script made a series {name:?}"))));
            return;
        };
        super::expr::send_whole(h, &s.points, start, (0, notes));
    })
}

/// A worker reading an XY plot (`(Y, X)`) one side or both of which a script makes: each side
/// a script's series, an expression or (X) `index`; pairs at the union of their times, each
/// holding its last value.
pub(super) fn spawn_xy(
    bag: &bagscope_reader::Bag,
    scripts: &[SeriesScript],
    (ys, xs): (&str, &str),
    env: &Env,
    ctx: &egui::Context,
) -> Result<Job<super::xy::XyPart>, String> {
    use bagscope_reader::expr::Expr;
    let sides: Vec<&str> = if xs == "index" {
        vec![ys]
    } else {
        vec![ys, xs]
    };
    let wanted: Vec<&str> = sides
        .iter()
        .copied()
        .filter(|t| makes(scripts, t))
        .collect();
    let scripts = script::eval::needed(scripts, &wanted);
    if let Some(e) = script::check(bag, &scripts, env).into_iter().next() {
        return Err(e.to_string());
    }
    // The sides that are expressions, checked now.
    let mut exprs = Vec::new();
    for t in sides.iter().filter(|t| !makes(&scripts, t)) {
        exprs.push(Expr::parse(t).map_err(|e| e.to_string())?);
    }
    let (bag, env) = (bag.clone(), env.clone());
    let sides: Vec<String> = sides.iter().map(|s| s.to_string()).collect();
    Job::spawn("xy script", 1, ctx, move |h| {
        let cancel = h.cancel_flag();
        let r = (|| -> Result<Vec<egui_plot::PlotPoint>, String> {
            let runs = script::evaluate(
                &bag,
                &scripts,
                &env,
                (None, None),
                Limits::default(),
                cancel,
            )
            .map_err(|e| e.to_string())?;
            let mut made = Vec::new();
            for r in runs {
                made.extend(r.map_err(|e| e.to_string())?.series);
            }
            let threads = bag.options().threads();
            let mut read = bagscope_reader::series::expr_series(
                &bag,
                &exprs,
                &env,
                (None, None),
                threads,
                cancel,
            )
            .map_err(|e| e.to_string())?
            .into_iter();
            let num = |pts: &[bagscope_reader::series::Point]| -> Vec<(u64, f64)> {
                pts.iter()
                    .map(|p| (p.time_ns, p.value.as_f64().unwrap_or(f64::NAN)))
                    .collect()
            };
            let mut v = Vec::new();
            for side in &sides {
                match made.iter().find(|m| m.name == *side) {
                    Some(m) => v.push(num(&m.points)),
                    None if makes(&scripts, side) => {
                        return Err(format!("no script made a series {side:?}"))
                    }
                    None => v.push(num(&read.next().unwrap_or_default().points)),
                }
            }
            Ok(match &v[..] {
                [y, x] => super::xy::pairs(super::xy::on_union(x, y)),
                [y] => super::xy::pairs(y.iter().enumerate().map(|(i, p)| (i as f64, p.1))),
                _ => Vec::new(),
            })
        })();
        h.send(r);
    })
}
