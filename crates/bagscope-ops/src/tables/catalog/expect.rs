//! Expectations over a fleet: every recording under some directories checked against one rules
//! file ([`crate::reports::expect`]), on every core, into the `expectations` table (one row per
//! recording and rule) that `bagscope catalog --expect` writes beside the catalog and that the
//! Python package's Dask reader builds the same way, one recording a partition.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};

use super::table::{arrow_err, write_parquet};
use crate::reports::expect::{evaluate, Outcome, Report, Rules, Status};
use bagscope_reader::bag::Bag;
use bagscope_reader::error::Result;

/// A report of one failure that stopped the checking (`open`, `rules`, `read`).
fn stopped(recording: &str, check: &'static str, line: usize, why: String) -> Report {
    Report {
        recording: recording.to_string(),
        start_ns: 0,
        outcomes: vec![Outcome {
            check,
            topic: String::new(),
            status: Status::Fail,
            measured: None,
            expected: match check {
                "open" => "a recording that opens",
                "rules" => "rules that fit the recording's types",
                _ => "a recording that reads",
            }
            .to_string(),
            range: None,
            detail: why,
            line,
        }],
        seconds: 0.0,
    }
}

/// One recording checked against `rules` (`rules_name` names the file in errors). What stops
/// the checking (the recording does not open, a condition's path is not in its types, a chunk
/// does not read) is a failed outcome, so that a fleet's table has a row for every recording.
pub fn check_recording(path: &Path, rules: &Rules, rules_name: &str, threads: usize) -> Report {
    let name = path.display().to_string();
    let bag = match Bag::open(path) {
        Ok(b) => b,
        Err(e) => return stopped(&name, "open", 0, e.to_string()),
    };
    if let Err(e) = rules.check_paths(&bag) {
        return stopped(&name, "rules", e.line, e.at(rules_name));
    }
    match evaluate(&bag, rules, &name, threads, &AtomicBool::new(false)) {
        Ok(r) => r,
        Err(e) => stopped(&name, "read", 0, e.to_string()),
    }
}

/// Every recording under `roots` (found as the catalog finds them) checked against `rules` on
/// `threads` threads, in the order found; the table is written to `out` when given.
pub fn check_fleet(
    roots: &[PathBuf],
    rules: &Rules,
    rules_name: &str,
    out: Option<&Path>,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Report>> {
    let found = super::find(roots);
    let reports = crate::tables::in_parallel(
        &found,
        threads,
        &|f| check_recording(&f.path, rules, rules_name, 1),
        progress,
    )?;
    if let Some(out) = out {
        write_parquet(out, expectations_batch(&reports)?)?;
    }
    Ok(reports)
}

/// The `expectations` table: `recording, check, topic, status, measured, expected, start_ns,
/// end_ns, detail, line`, one row per recording and rule.
pub fn expectations_batch(reports: &[Report]) -> Result<RecordBatch> {
    let rows: Vec<(&Report, &Outcome)> = reports
        .iter()
        .flat_map(|r| r.outcomes.iter().map(move |o| (r, o)))
        .collect();
    let strings = |f: &dyn Fn(&Report, &Outcome) -> String| -> ArrayRef {
        let mut b = StringBuilder::new();
        for (r, o) in &rows {
            b.append_value(f(r, o));
        }
        Arc::new(b.finish())
    };
    let ints = |f: &dyn Fn(&Outcome) -> Option<i64>| -> ArrayRef {
        let mut b = Int64Builder::new();
        for (_, o) in &rows {
            b.append_option(f(o));
        }
        Arc::new(b.finish())
    };
    let mut measured = Float64Builder::new();
    for (_, o) in &rows {
        measured.append_option(o.measured.filter(|x| x.is_finite()));
    }
    let ns = |t: u64| i64::try_from(t).ok();
    RecordBatch::try_from_iter(vec![
        ("recording", strings(&|r, _| r.recording.clone())),
        ("check", strings(&|_, o| o.check.to_string())),
        ("topic", strings(&|_, o| o.topic.clone())),
        ("status", strings(&|_, o| o.status.name().to_string())),
        ("measured", Arc::new(measured.finish()) as ArrayRef),
        ("expected", strings(&|_, o| o.expected.clone())),
        ("start_ns", ints(&|o| o.range.and_then(|r| ns(r.0)))),
        ("end_ns", ints(&|o| o.range.and_then(|r| ns(r.1)))),
        ("detail", strings(&|_, o| o.detail.clone())),
        ("line", ints(&|o| i64::try_from(o.line).ok())),
    ])
    .map_err(arrow_err)
}
