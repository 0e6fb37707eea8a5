//! `bagscope check --expect RULES.yaml`: recordings checked against expectations.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use bagscope_ops::reports::expect::{self, Outcome, Report, Rules, Status};
use bagscope_reader::storage::output::Staged;
use bagscope_reader::{Bag, OpenOptions};

use super::check::CheckArgs;
use crate::cli::Error;

/// Reads and parses a rules file; its errors name the file and line.
pub fn read_rules(path: &Path) -> crate::cli::Result<Rules> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Invalid(format!("{}: cannot read: {e}", path.display())))?;
    Rules::parse(&text).map_err(|e| Error::Invalid(e.at(&path.display().to_string())))
}

/// A recording that does not open, as a report with one failure.
fn not_opened(recording: &str, why: String) -> Report {
    Report {
        recording: recording.to_string(),
        start_ns: 0,
        outcomes: vec![Outcome {
            check: "open",
            topic: String::new(),
            status: Status::Fail,
            measured: None,
            expected: "a recording that opens".into(),
            range: None,
            detail: why,
            line: 0,
        }],
        seconds: 0.0,
    }
}

/// Runs `bagscope check --expect`.
pub fn run(
    a: &CheckArgs,
    rules_path: &Path,
    threads: usize,
    opts: &OpenOptions,
) -> crate::cli::Result<ExitCode> {
    let rules = read_rules(rules_path)?;
    let rules_name = rules_path.display().to_string();
    // Every recording opened and the rules' paths checked against it before any is read.
    let mut opened = Vec::new();
    for p in &a.bags {
        let name = p.display().to_string();
        match Bag::open_with(p, opts) {
            Ok(bag) => {
                rules
                    .check_paths(&bag)
                    .map_err(|e| Error::Invalid(format!("in {name}: {}", e.at(&rules_name))))?;
                opened.push((name, Ok(bag)));
            }
            Err(e) => opened.push((name, Err(e.to_string()))),
        }
    }
    let cancel = AtomicBool::new(false);
    let mut reports = Vec::new();
    let mut out = std::io::stdout().lock();
    for (name, bag) in opened {
        let report = match bag {
            Ok(bag) => expect::evaluate(&bag, &rules, &name, threads, &cancel)?,
            Err(why) => not_opened(&name, why),
        };
        if !a.json {
            write!(out, "{}", expect::text(&report, &rules_name, a.verbose))?;
            out.flush()?;
        }
        reports.push(report);
    }
    if a.json {
        let j = expect::outcomes_json(&reports);
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&j).map_err(|e| Error::Invalid(e.to_string()))?
        )?;
    }
    if let Some(path) = &a.junit {
        let staged = Staged::new(path);
        let mut f = staged.create()?;
        f.write_all(expect::junit(&reports, &rules_name).as_bytes())?;
        staged.commit(f)?;
    }
    Ok(if reports.iter().all(Report::passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
