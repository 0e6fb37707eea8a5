//! Plotted series that a script makes (a layout's custom series, PlotJuggler's snippets run):
//! the script, and those it reads, run on a worker; its error (script, line, time) is the
//! series' note.

use super::super::job::Job;
use super::Part;
use bagscope_ops::script::{self, Limits, SeriesScript};
use bagscope_reader::series::Env;

/// Whether `name` is a series one of `scripts` makes (its name, or `NAME.key`).
pub(super) fn makes(scripts: &[SeriesScript], name: &str) -> bool {
    scripts.iter().any(|s| {
        s.name == name
            || name
                .strip_prefix(s.name.as_str())
                .is_some_and(|r| r.starts_with('.'))
    })
}

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
