//! Expectations in the app (File › Check expectations…, and `bagscope REC --expect
//! rules.yaml`): the recording checked against a rules file on a worker, each failure shown as a
//! bookmark on the timeline over its time range, in red, named by its rule and line.

use std::path::PathBuf;

use bagscope_ops::bookmarks::Bookmark;
use bagscope_ops::reports::expect::{evaluate, Report, Rules};

use super::job::Job;
use super::Doc;

/// Every failure's bookmark label starts with this, so a check run again replaces them.
pub const LABEL: &str = "FAIL ";
/// Their colour.
const COLOR: &str = "#e0483e";

/// A check under way, or the file dialog choosing its rules.
#[derive(Default)]
pub struct Expect {
    /// The rules file being chosen.
    pub dialog: Option<Job<Option<PathBuf>>>,
    /// The check under way: the rules file's name and the report, or what stopped it.
    pub job: Option<Job<Result<(String, Report), String>>>,
}

/// Shows the file dialog for a rules file (on a worker: the dialog blocks).
pub fn dialog(d: &mut Doc, ctx: &egui::Context) {
    let r = Job::spawn("expect-dialog", 1, ctx, move |h| {
        h.send(
            rfd::FileDialog::new()
                .set_title("Check expectations: a rules file")
                .add_filter("Rules", &["yaml", "yml"])
                .pick_file(),
        );
    });
    if let Ok(j) = r {
        d.expect.dialog = Some(j);
    }
}

/// Checks the recording against the rules file at `path` on a worker.
pub fn start(d: &mut Doc, path: PathBuf, ctx: &egui::Context) {
    let bag = d.rec.bag.clone();
    let shown = d.rec.path.display().to_string();
    let r = Job::spawn("expect", 1, ctx, move |h| {
        let name = path.display().to_string();
        let run = || -> Result<(String, Report), String> {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
            let rules = Rules::parse(&text).map_err(|e| e.at(&name))?;
            rules.check_paths(&bag).map_err(|e| e.at(&name))?;
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let report = evaluate(&bag, &rules, &shown, threads, h.cancel_flag())
                .map_err(|e| format!("{name}: {e}"))?;
            Ok((name.clone(), report))
        };
        h.send(run());
    });
    match r {
        Ok(j) => d.expect.job = Some(j),
        Err(e) => d.expect.job = Some(Job::done(Err(e))),
    }
}

/// Takes a chosen rules file (to check against) and a finished check: its failures become
/// bookmarks (those of a check before replaced); what it came to is said in `notice`/`error`.
pub fn poll(
    d: &mut Doc,
    ctx: &egui::Context,
    notice: &mut Option<String>,
    error: &mut Option<String>,
) {
    if let Some(chosen) = d.expect.dialog.as_mut().and_then(Job::take) {
        d.expect.dialog = None;
        if let Some(p) = chosen {
            start(d, p, ctx);
        }
    }
    let Some(r) = d.expect.job.as_mut().and_then(Job::take) else {
        return;
    };
    d.expect.job = None;
    match r {
        Err(e) => *error = Some(e),
        Ok((name, report)) => {
            *notice = Some(show(d, &name, &report));
        }
    }
}

/// The failures of `report` as bookmarks; returns the sentence that says what came of it.
pub fn show(d: &mut Doc, rules: &str, report: &Report) -> String {
    d.nav.bookmarks.retain(|(_, l)| !l.starts_with(LABEL));
    d.rec.notes.retain(|n| !n.label.starts_with(LABEL));
    let start = report.start_ns;
    let mut failed = 0;
    for o in report.failures() {
        failed += 1;
        let (a, b) = o.range.unwrap_or((start, start));
        let topic = if o.topic.is_empty() {
            String::new()
        } else {
            format!(" {}", o.topic)
        };
        let label = format!(
            "{LABEL}{}{topic}: {} (expected {}) [{rules}:{}]",
            o.check, o.detail, o.expected, o.line
        );
        d.nav.bookmarks.push((a, label.clone()));
        d.rec.notes.push(Bookmark {
            start_ns: a,
            end_ns: (b > a).then_some(b),
            label,
            color: COLOR.to_string(),
        });
    }
    d.nav.bookmarks.sort();
    let total = report.outcomes.len();
    if failed == 0 {
        format!("{rules}: all {total} expectations met")
    } else {
        format!("{rules}: {failed} of {total} expectations failed (red bookmarks on the timeline)")
    }
}
