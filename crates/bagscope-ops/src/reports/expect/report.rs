//! A recording's outcomes for people (text), for programs (JSON) and for CI systems (JUnit XML).

use std::fmt::Write as _;

use quick_xml::escape::escape;
use serde_json::{json, Value};

use super::{Outcome, Report, Status};

/// Seconds from the recording's start, `+12.345 s`.
fn rel(ns: u64, start: u64) -> String {
    format!("+{:.3} s", ns.saturating_sub(start) as f64 / 1e9)
}

fn range_text(o: &Outcome, start: u64) -> String {
    match o.range {
        Some((a, b)) if a == b => format!(" at {}", rel(a, start)),
        Some((a, b)) => format!(" from {} to {}", rel(a, start), rel(b, start)),
        None => String::new(),
    }
}

/// The report as text: one line per failure and skip (`--verbose`: per rule), then a verdict.
///
/// `rules` is the rules file's name, which each line's number refers to.
pub fn text(r: &Report, rules: &str, verbose: bool) -> String {
    let mut s = String::new();
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    for o in &r.outcomes {
        match o.status {
            Status::Pass => pass += 1,
            Status::Fail => fail += 1,
            Status::Skip => skip += 1,
        }
        if o.status == Status::Pass && !verbose {
            continue;
        }
        let topic = if o.topic.is_empty() {
            String::new()
        } else {
            format!(" {}", o.topic)
        };
        let _ = writeln!(
            s,
            "  {} {}{topic}: {} (expected {}){} [{rules}:{}]",
            o.status.name().to_uppercase(),
            o.check,
            o.detail,
            o.expected,
            range_text(o, r.start_ns),
            o.line
        );
    }
    let verdict = if fail == 0 { "PASS" } else { "FAIL" };
    format!(
        "{}: {verdict} — {pass} passed, {fail} failed, {skip} skipped ({:.2} s)\n{s}",
        r.recording, r.seconds
    )
}

/// The reports as JSON: `[{recording, passed, outcomes: [{check, topic, status, measured,
/// expected, start_ns, end_ns, start_s, end_s, detail, line}]}]` (`start_s`: from the
/// recording's start).
pub fn outcomes_json(reports: &[Report]) -> Value {
    Value::Array(
        reports
            .iter()
            .map(|r| {
                let outcomes: Vec<Value> = r
                    .outcomes
                    .iter()
                    .map(|o| {
                        let secs = |ns: u64| ns.saturating_sub(r.start_ns) as f64 / 1e9;
                        json!({
                            "check": o.check,
                            "topic": o.topic,
                            "status": o.status.name(),
                            "measured": o.measured.filter(|x| x.is_finite()),
                            "expected": o.expected,
                            "start_ns": o.range.map(|r| r.0),
                            "end_ns": o.range.map(|r| r.1),
                            "start_s": o.range.map(|r| secs(r.0)),
                            "end_s": o.range.map(|r| secs(r.1)),
                            "detail": o.detail,
                            "line": o.line,
                        })
                    })
                    .collect();
                json!({
                    "recording": r.recording,
                    "passed": r.passed(),
                    "seconds": r.seconds,
                    "outcomes": outcomes,
                })
            })
            .collect(),
    )
}

/// The reports as JUnit XML: a `testsuite` per recording, a `testcase` per rule (named
/// `CHECK TOPIC`, its class the recording), a `failure` or `skipped` element where it did not
/// pass.
pub fn junit(reports: &[Report], rules: &str) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let count = |st: Status| -> usize {
        reports
            .iter()
            .map(|r| r.outcomes.iter().filter(|o| o.status == st).count())
            .sum()
    };
    let total: usize = reports.iter().map(|r| r.outcomes.len()).sum();
    let time: f64 = reports.iter().map(|r| r.seconds).sum();
    let _ = writeln!(
        s,
        "<testsuites name=\"bagscope check --expect {}\" tests=\"{total}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{time:.3}\">",
        escape(rules),
        count(Status::Fail),
        count(Status::Skip)
    );
    for r in reports {
        let n = |st: Status| r.outcomes.iter().filter(|o| o.status == st).count();
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3}\">",
            escape(r.recording.as_str()),
            r.outcomes.len(),
            n(Status::Fail),
            n(Status::Skip),
            r.seconds
        );
        for o in &r.outcomes {
            let name = if o.topic.is_empty() {
                o.check.to_string()
            } else {
                format!("{} {}", o.check, o.topic)
            };
            let head = format!(
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\" time=\"0\"",
                escape(r.recording.as_str()),
                escape(name.as_str()),
                escape(rules),
                o.line
            );
            let msg = format!(
                "{} (expected {}){}",
                o.detail,
                o.expected,
                range_text(o, r.start_ns)
            );
            match o.status {
                Status::Pass => {
                    let _ = writeln!(s, "{head}/>");
                }
                Status::Fail => {
                    let _ = writeln!(
                        s,
                        "{head}>\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                        o.check,
                        escape(msg.as_str()),
                        escape(format!("{rules}:{}: {msg}", o.line).as_str())
                    );
                }
                Status::Skip => {
                    let _ = writeln!(
                        s,
                        "{head}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                        escape(msg.as_str())
                    );
                }
            }
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}
