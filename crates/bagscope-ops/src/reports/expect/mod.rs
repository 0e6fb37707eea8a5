//! Expectations: a recording checked against a rules file (`bagscope check --expect
//! rules.yaml`): required topics and types, message counts, rates (the mean and the share of
//! periods within bounds), the longest gap, when topics start and end (after the recording's
//! start, and together), `header.stamp` lag, and conditions on any expression
//! (`/battery.percentage > 0.1`). Each rule gives an [`Outcome`]: passed, failed (with its
//! topic, its time range and the value measured) or skipped (a topic that is not required is
//! absent).
//!
//! Counts, rates, gaps and alignment come from the message tables alone (as `info --freq`
//! does); conditions are read in one pass over the chunks on every thread; a stamp lag reads its
//! topic's messages.

use std::sync::atomic::AtomicBool;

use bagscope_reader::bag::Bag;
use bagscope_reader::error::Result;
use bagscope_reader::series::{expr_series, Env};

use super::timing::{connection_times, stamp_delays};

mod report;
mod rules;

pub use report::{junit, outcomes_json, text};
pub use rules::{Alignment, Bounds, Condition, Limit, Rules, TopicRules};

/// How a rule came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The recording meets it.
    Pass,
    /// It does not.
    Fail,
    /// Not checked (a topic that is not required is absent).
    Skip,
}

impl Status {
    /// `pass`, `fail`, `skip`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }
}

/// One rule checked on one recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Which rule: `required`, `type`, `count`, `rate`, `rate_share`, `max_gap`, `stamp_lag`,
    /// `start_within`, `end_within`, `value`, `alignment_start`, `alignment_end`, `duration`.
    pub check: &'static str,
    /// Its topic (topics joined with `,` for alignment; empty for the recording's duration).
    pub topic: String,
    /// How it came out.
    pub status: Status,
    /// The value measured (Hz, messages, seconds, a share, the worst sample), where one is.
    pub measured: Option<f64>,
    /// What was expected, as written for people (`[90, 110] Hz`, `/a.x > 3`).
    pub expected: String,
    /// Where it fails (ns since the epoch): the gap, the first run of failing samples, ...
    pub range: Option<(u64, u64)>,
    /// What was seen, in words.
    pub detail: String,
    /// The rule's line in the rules file.
    pub line: usize,
}

/// A recording's outcomes.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The recording as given.
    pub recording: String,
    /// Its start (ns), for times relative to it.
    pub start_ns: u64,
    /// Every rule's outcome, in the rules file's order.
    pub outcomes: Vec<Outcome>,
    /// The checking took this long (s).
    pub seconds: f64,
}

impl Report {
    /// Whether every rule passed or was skipped.
    pub fn passed(&self) -> bool {
        self.outcomes.iter().all(|o| o.status != Status::Fail)
    }

    /// The failures.
    pub fn failures(&self) -> impl Iterator<Item = &Outcome> {
        self.outcomes.iter().filter(|o| o.status == Status::Fail)
    }
}

/// `pkg/msg/Type` and `pkg/Type` (and `pkg/srv/...`) as one name.
fn same_type(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().replace("/msg/", "/");
    norm(a) == norm(b)
}

const SEC: f64 = 1e9;

/// Checks `bag` against `rules` (whose paths [`Rules::check_paths`] has accepted).
pub fn evaluate(
    bag: &Bag,
    rules: &Rules,
    recording: &str,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Report> {
    let t0 = std::time::Instant::now();
    let s = bag.summary();
    let (start, end) = (s.start_ns.unwrap_or(0), s.end_ns.unwrap_or(0));
    let tables = bag.tables()?;
    let times_of = |topic: &str| -> Vec<u64> {
        s.topic(topic)
            .map(|t| connection_times(&tables, &t.connections))
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    if let Some(b) = rules.duration {
        let d = end.saturating_sub(start) as f64 / SEC;
        out.push(Outcome {
            check: "duration",
            topic: String::new(),
            status: pass_if(b.holds(d)),
            measured: Some(d),
            expected: b.text(" s"),
            range: Some((start, end)),
            detail: format!("the recording lasts {d:.3} s"),
            line: b.line,
        });
    }
    // Conditions read in one pass: those whose topics are all in the recording.
    let readable: Vec<&Condition> = rules
        .conditions()
        .filter(|c| c.topics.iter().all(|t| s.topic(t).is_some()))
        .collect();
    let mut exprs: Vec<_> = readable.iter().map(|c| c.expr.clone()).collect();
    // Header stamps read in the same pass, where the topic's type lets a path name them.
    let stamps: Vec<(&str, Stamps)> = rules
        .topics
        .iter()
        .filter(|t| t.stamp_lag.is_some() && s.topic(&t.name).is_some())
        .map(|t| (t.name.as_str(), stamp_paths(bag, &t.name, &mut exprs)))
        .collect();
    let series = if exprs.is_empty() {
        Vec::new()
    } else {
        expr_series(bag, &exprs, &Env::default(), (None, None), threads, cancel)?
    };
    let condition = |c: &Condition, topic: &str| -> Outcome {
        match readable.iter().position(|r| std::ptr::eq(*r, c)) {
            Some(i) => value_outcome(c, topic, &series[i].points),
            None => {
                let absent: Vec<&str> = c
                    .topics
                    .iter()
                    .filter(|t| s.topic(t).is_none())
                    .map(String::as_str)
                    .collect();
                // Skipped only where every absent topic is listed as optional.
                let optional = absent
                    .iter()
                    .all(|a| rules.topics.iter().any(|t| t.name == *a && !t.required));
                Outcome {
                    check: "value",
                    topic: topic.to_string(),
                    status: if optional { Status::Skip } else { Status::Fail },
                    measured: None,
                    expected: c.text.clone(),
                    range: None,
                    detail: format!("{} not in the recording", absent.join(", ")),
                    line: c.line,
                }
            }
        }
    };
    for t in &rules.topics {
        let present = s.topic(&t.name);
        let times = times_of(&t.name);
        let n = times.len();
        if n == 0 {
            let why = if present.is_some() {
                "the topic has no messages"
            } else {
                "the topic is not in the recording"
            };
            out.push(Outcome {
                check: "required",
                topic: t.name.clone(),
                status: if t.required {
                    Status::Fail
                } else {
                    Status::Skip
                },
                measured: Some(0.0),
                expected: if t.required {
                    "at least one message".into()
                } else {
                    "optional".into()
                },
                range: None,
                detail: why.to_string(),
                line: t.line,
            });
            if present.is_none() {
                for c in &t.values {
                    out.push(condition(c, &t.name));
                }
                continue;
            }
        } else if t.required {
            out.push(Outcome {
                check: "required",
                topic: t.name.clone(),
                status: Status::Pass,
                measured: Some(n as f64),
                expected: "at least one message".into(),
                range: Some((times[0], times[n - 1])),
                detail: format!("{n} messages"),
                line: t.line,
            });
        }
        let topic_outcome =
            |check, status, measured, expected: String, range, detail, line| Outcome {
                check,
                topic: t.name.clone(),
                status,
                measured,
                expected,
                range,
                detail,
                line,
            };
        if let (Some((want, line)), Some(p)) = (&t.datatype, present) {
            out.push(topic_outcome(
                "type",
                pass_if(same_type(want, &p.datatype)),
                None,
                want.clone(),
                None,
                format!("the topic's type is {}", p.datatype),
                *line,
            ));
        }
        if let Some(b) = t.count {
            out.push(topic_outcome(
                "count",
                pass_if(b.holds(n as f64)),
                Some(n as f64),
                b.text(" messages"),
                times.first().zip(times.last()).map(|(a, b)| (*a, *b)),
                format!("{n} messages"),
                b.line,
            ));
        }
        if let Some(b) = t.rate {
            out.push(rate_outcome(&t.name, &times, b));
            if let Some((share, line)) = t.rate_share {
                out.push(share_outcome(&t.name, &times, b, share, line));
            }
        }
        if let Some(l) = t.max_gap {
            let gap = times
                .windows(2)
                .map(|w| (w[1] - w[0], w[0], w[1]))
                .max_by_key(|g| g.0);
            let (len, a, b) = gap.unwrap_or((0, times.first().copied().unwrap_or(start), 0));
            let secs = len as f64 / SEC;
            out.push(topic_outcome(
                "max_gap",
                pass_if(secs <= l.secs),
                Some(secs),
                format!("≤ {} s", l.secs),
                (len > 0).then_some((a, b)),
                if len > 0 {
                    format!("the longest gap is {secs:.3} s")
                } else {
                    "fewer than two messages".into()
                },
                l.line,
            ));
        }
        if let (Some(l), Some(&first)) = (t.start_within, times.first()) {
            let secs = first.saturating_sub(start) as f64 / SEC;
            out.push(topic_outcome(
                "start_within",
                pass_if(secs <= l.secs),
                Some(secs),
                format!("≤ {} s after the recording's start", l.secs),
                Some((start, first)),
                format!("the first message comes {secs:.3} s after the start"),
                l.line,
            ));
        }
        if let (Some(l), Some(&last)) = (t.end_within, times.last()) {
            let secs = end.saturating_sub(last) as f64 / SEC;
            out.push(topic_outcome(
                "end_within",
                pass_if(secs <= l.secs),
                Some(secs),
                format!("≤ {} s before the recording's end", l.secs),
                Some((last, end)),
                format!("the last message comes {secs:.3} s before the end"),
                l.line,
            ));
        }
        if let Some(b) = t.stamp_lag {
            let read = stamps
                .iter()
                .find(|(n, _)| *n == t.name)
                .and_then(|(_, st)| st.delays(&series));
            let read = match read {
                Some(d) => Ok(d),
                None => stamp_delays(bag, &t.name, cancel),
            };
            out.push(match read {
                Ok(d) => lag_outcome(&t.name, &d, b),
                Err(e) => topic_outcome(
                    "stamp_lag",
                    Status::Fail,
                    None,
                    b.text(" s"),
                    None,
                    e.to_string(),
                    b.line,
                ),
            });
        }
        for c in &t.values {
            out.push(condition(c, &t.name));
        }
    }
    let optional = |topic: &str| rules.topics.iter().any(|t| t.name == topic && !t.required);
    for a in &rules.alignment {
        out.extend(alignment_outcomes(a, &times_of, &optional));
    }
    for c in &rules.values {
        out.push(condition(c, &c.topics.join(",")));
    }
    Ok(Report {
        recording: recording.to_string(),
        start_ns: start,
        outcomes: out,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Where a topic's header stamps are among the expressions read in the one pass.
enum Stamps {
    /// `header.stamp` is a ROS 1 `time`: one series.
    Time(usize),
    /// `header.stamp.sec` and `header.stamp.nanosec` (ROS 2): two series of the same messages.
    SecNanosec(usize, usize),
    /// Not named by a path here: read on their own.
    Apart,
}

impl Stamps {
    /// (receive time, stamp − receive time in ns) of every message, as [`stamp_delays`]
    /// gives them; `None` where the series do not pair up (read on their own then).
    fn delays(&self, series: &[bagscope_reader::series::Series]) -> Option<Vec<(u64, i64)>> {
        use bagscope_reader::encoding::Value;
        let d = |t: u64, stamp: i128| {
            (stamp - i128::from(t)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        };
        match *self {
            Stamps::Time(i) => series[i]
                .points
                .iter()
                .map(|p| match p.value {
                    Value::Time { sec, nsec } => Some((
                        p.time_ns,
                        d(
                            p.time_ns,
                            i128::from(sec) * 1_000_000_000 + i128::from(nsec),
                        ),
                    )),
                    _ => None,
                })
                .collect(),
            Stamps::SecNanosec(a, b) => {
                let (a, b) = (&series[a].points, &series[b].points);
                if a.len() != b.len() {
                    return None;
                }
                a.iter()
                    .zip(b)
                    .map(|(x, y)| {
                        let int = |v: &Value| match *v {
                            Value::I32(n) => Some(i128::from(n)),
                            Value::U32(n) => Some(i128::from(n)),
                            Value::I64(n) => Some(i128::from(n)),
                            Value::U64(n) => Some(i128::from(n)),
                            _ => None,
                        };
                        (x.time_ns == y.time_ns).then_some(())?;
                        let ns = int(&x.value)? * 1_000_000_000 + int(&y.value)?;
                        Some((x.time_ns, d(x.time_ns, ns)))
                    })
                    .collect()
            }
            Stamps::Apart => None,
        }
    }
}

/// Adds to `exprs` the paths that name `topic`'s header stamp, where its type has them.
fn stamp_paths(bag: &Bag, topic: &str, exprs: &mut Vec<bagscope_reader::expr::Expr>) -> Stamps {
    use bagscope_reader::expr::Expr;
    let compiles = |text: &str| -> Option<Expr> {
        let e = Expr::parse(text).ok()?;
        let p = e.plain_path()?;
        let vars = Default::default();
        let src = bagscope_reader::series::Source {
            path: p,
            text,
            vars: &vars,
        };
        bagscope_reader::series::compile_source(bag, src).ok()?;
        Some(e)
    };
    let mut push = |e: Expr| {
        exprs.push(e);
        exprs.len() - 1
    };
    if let (Some(sec), Some(ns)) = (
        compiles(&format!("{topic}.header.stamp.sec")),
        compiles(&format!("{topic}.header.stamp.nanosec")),
    ) {
        return Stamps::SecNanosec(push(sec), push(ns));
    }
    match compiles(&format!("{topic}.header.stamp")) {
        Some(e) => Stamps::Time(push(e)),
        None => Stamps::Apart,
    }
}

fn pass_if(ok: bool) -> Status {
    if ok {
        Status::Pass
    } else {
        Status::Fail
    }
}

fn rate_outcome(topic: &str, times: &[u64], b: Bounds) -> Outcome {
    let n = times.len();
    let span = times.last().zip(times.first()).map_or(0, |(z, a)| z - a);
    let (hz, detail) = if n >= 2 && span > 0 {
        let hz = (n - 1) as f64 * SEC / span as f64;
        (hz, format!("{hz:.3} Hz on average over {n} messages"))
    } else {
        (f64::NAN, "fewer than two messages apart in time".into())
    };
    Outcome {
        check: "rate",
        topic: topic.to_string(),
        status: pass_if(b.holds(hz)),
        measured: (!hz.is_nan()).then_some(hz),
        expected: b.text(" Hz"),
        range: (n >= 2).then(|| (times[0], times[n - 1])),
        detail,
        line: b.line,
    }
}

/// The share of periods whose rate (1 / period) is within `b`; fails below `share`, with the
/// first period out of bounds as its range.
fn share_outcome(topic: &str, times: &[u64], b: Bounds, share: f64, line: usize) -> Outcome {
    let periods = times.len().saturating_sub(1);
    let mut within = 0usize;
    let mut first_out = None;
    for w in times.windows(2) {
        let d = w[1] - w[0];
        let hz = if d == 0 {
            f64::INFINITY
        } else {
            SEC / d as f64
        };
        if b.holds(hz) {
            within += 1;
        } else if first_out.is_none() {
            first_out = Some((w[0], w[1]));
        }
    }
    let got = if periods == 0 {
        0.0
    } else {
        within as f64 / periods as f64
    };
    Outcome {
        check: "rate_share",
        topic: topic.to_string(),
        status: pass_if(periods > 0 && got >= share),
        measured: Some(got),
        expected: format!("≥ {share} of periods within {}", b.text(" Hz")),
        range: if got >= share { None } else { first_out },
        detail: format!(
            "{within} of {periods} periods ({:.2} %) within",
            got * 100.0
        ),
        line,
    }
}

/// Samples where `ok` fails: how many, the worst (by `worse`), and the first run of them.
struct Misses {
    count: usize,
    total: usize,
    worst: Option<f64>,
    first_run: Option<(u64, u64)>,
}

fn misses(
    samples: impl Iterator<Item = (u64, f64)>,
    ok: impl Fn(f64) -> bool,
    worse: impl Fn(f64, f64) -> bool,
) -> Misses {
    let mut m = Misses {
        count: 0,
        total: 0,
        worst: None,
        first_run: None,
    };
    let mut in_first = false;
    for (t, x) in samples {
        m.total += 1;
        if ok(x) {
            in_first = false;
            continue;
        }
        m.count += 1;
        if m.worst
            .is_none_or(|w| x.is_nan() || (!w.is_nan() && worse(x, w)))
        {
            m.worst = Some(x);
        }
        match &mut m.first_run {
            None => {
                m.first_run = Some((t, t));
                in_first = true;
            }
            Some((_, e)) if in_first => *e = t,
            _ => {}
        }
    }
    m
}

/// Samples where the expression has no value (NaN: a formula's other series not begun yet, a
/// field not a number, a sensor's "unknown") are counted, not failed; a condition with no
/// defined sample fails.
fn value_outcome(c: &Condition, topic: &str, points: &[bagscope_reader::series::Point]) -> Outcome {
    use crate::reports::find::Op;
    let mut undefined = 0usize;
    let samples = points
        .iter()
        .map(|p| (p.time_ns, p.value.as_f64().unwrap_or(f64::NAN)))
        .filter(|(_, x)| {
            let nan = x.is_nan();
            undefined += usize::from(nan);
            !nan
        });
    // The worst sample is the one furthest on the wrong side.
    let below = matches!(c.op, Op::Gt | Op::Ge);
    let m = misses(
        samples,
        |x| c.holds(x),
        |x, w| if below { x < w } else { x > w },
    );
    let and_undefined = if undefined > 0 {
        format!(" ({undefined} without a value)")
    } else {
        String::new()
    };
    let detail = if m.total == 0 {
        format!("no samples with a value{and_undefined}")
    } else if m.count == 0 {
        format!("all {} samples hold{and_undefined}", m.total)
    } else {
        format!(
            "{} of {} samples do not hold (worst {}){and_undefined}",
            m.count,
            m.total,
            m.worst.map_or("-".into(), |w| w.to_string())
        )
    };
    Outcome {
        check: "value",
        topic: topic.to_string(),
        status: pass_if(m.total > 0 && m.count == 0),
        measured: m.worst,
        expected: c.text.clone(),
        range: m.first_run,
        detail,
        line: c.line,
    }
}

/// `delays`: (receive time, stamp − receive time in ns); the lag is its negation in seconds.
fn lag_outcome(topic: &str, delays: &[(u64, i64)], b: Bounds) -> Outcome {
    let samples = delays.iter().map(|&(t, d)| (t, -(d as f64) / SEC));
    let far = |x: f64| {
        b.lo.map_or(0.0, |lo| (lo - x).max(0.0)) + b.hi.map_or(0.0, |hi| (x - hi).max(0.0))
    };
    let m = misses(samples, |x| b.holds(x), |x, w| far(x) > far(w));
    let detail = if m.total == 0 {
        "no message has a header.stamp".to_string()
    } else if m.count == 0 {
        format!("all {} messages within", m.total)
    } else {
        format!(
            "{} of {} messages outside (worst {:.6} s)",
            m.count,
            m.total,
            m.worst.unwrap_or(f64::NAN)
        )
    };
    Outcome {
        check: "stamp_lag",
        topic: topic.to_string(),
        status: pass_if(m.total > 0 && m.count == 0),
        measured: m.worst,
        expected: b.text(" s"),
        range: m.first_run,
        detail,
        line: b.line,
    }
}

/// A group with a topic absent fails, unless each absent one is listed as optional (skipped).
fn alignment_outcomes(
    a: &Alignment,
    times_of: &dyn Fn(&str) -> Vec<u64>,
    optional: &dyn Fn(&str) -> bool,
) -> Vec<Outcome> {
    let ends: Vec<(&str, Option<(u64, u64)>)> = a
        .topics
        .iter()
        .map(|t| {
            let v = times_of(t);
            (t.as_str(), v.first().copied().zip(v.last().copied()))
        })
        .collect();
    let absent: Vec<&str> = ends
        .iter()
        .filter(|(_, e)| e.is_none())
        .map(|(t, _)| *t)
        .collect();
    let mut out = Vec::new();
    for (check, limit) in [("alignment_start", a.start), ("alignment_end", a.end)] {
        let Some(l) = limit else { continue };
        let pick = |e: (u64, u64)| if check == "alignment_start" { e.0 } else { e.1 };
        let at: Vec<(u64, &str)> = ends
            .iter()
            .filter_map(|(t, e)| e.map(|e| (pick(e), *t)))
            .collect();
        let lo = at.iter().min();
        let hi = at.iter().max();
        let (status, measured, range, detail) = match (absent.is_empty(), lo, hi) {
            (true, Some(lo), Some(hi)) => {
                let spread = (hi.0 - lo.0) as f64 / SEC;
                (
                    pass_if(spread <= l.secs),
                    Some(spread),
                    Some((lo.0, hi.0)),
                    format!("{} is {spread:.3} s after {}", hi.1, lo.1),
                )
            }
            _ => (
                if absent.iter().all(|t| optional(t)) {
                    Status::Skip
                } else {
                    Status::Fail
                },
                None,
                None,
                format!("no messages on {}", absent.join(", ")),
            ),
        };
        let which = if check == "alignment_start" {
            "first"
        } else {
            "last"
        };
        out.push(Outcome {
            check,
            topic: a.topics.join(","),
            status,
            measured,
            expected: format!("{which} messages within {} s of each other", l.secs),
            range,
            detail,
            line: l.line,
        });
    }
    out
}
