//! Several runs of a robot side by side (`bagscope compare`, the app's comparison view): per
//! topic, how many messages, their mean rate, the longest gap and the first and last times;
//! for chosen numeric fields, min, mean, max and standard deviation; each run against the
//! first. Times are seconds from each run's zero: its start, or the first message of a chosen
//! topic (runs aligned on an event).

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;

use serde_json::{json, Value};

use bagscope_reader::bag::Bag;
use bagscope_reader::encoding::FieldPath;
use bagscope_reader::error::{Error, Result};
use bagscope_reader::series::field_series;

use crate::reports::timing::topic_times;

/// Where each run's time zero is.
#[derive(Debug, Clone, PartialEq)]
pub enum Align {
    /// Its first message.
    Start,
    /// The first message of this topic in it.
    Topic(String),
    /// This time in it (ns since the epoch), one a run.
    At(Vec<u64>),
    /// Its bookmark of this label (kept in the recording: MCAP metadata, a sidecar).
    Bookmark(String),
}

/// One topic in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicStats {
    /// Messages on the topic.
    pub count: u64,
    /// Messages per second over the topic's own span: (count − 1) / (last − first).
    pub rate_hz: Option<f64>,
    /// The longest time between two consecutive messages (s).
    pub longest_gap_s: Option<f64>,
    /// The first message, s from the run's zero.
    pub first_s: f64,
    /// The last message, s from the run's zero.
    pub last_s: f64,
}

/// One numeric field in one run (NaN values left out, as pandas leaves them out).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldStats {
    /// Values that are numbers.
    pub count: u64,
    /// Smallest value.
    pub min: f64,
    /// Mean value.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
    /// The sample standard deviation (n − 1), as pandas gives it; none for one value.
    pub std: Option<f64>,
}

/// Several runs compared.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Each run's name (its path as given).
    pub runs: Vec<String>,
    /// Each run's zero (ns since the epoch).
    pub zeros: Vec<u64>,
    /// How the runs were put on one clock.
    pub align: Align,
    /// Every topic of any run, sorted, with its stats in each run (none: not in that run).
    pub topics: Vec<(String, Vec<Option<TopicStats>>)>,
    /// The fields asked for, with their stats in each run (none: no value there).
    pub fields: Vec<(String, Vec<Option<FieldStats>>)>,
    /// What could not be read (a field whose path does not resolve in a run).
    pub notes: Vec<String>,
}

fn secs(ns: i128) -> f64 {
    ns as f64 / 1e9
}

/// The stats of `times` (sorted receive times) from `zero`.
pub fn topic_stats(times: &[u64], zero: u64) -> Option<TopicStats> {
    let (&first, &last) = (times.first()?, times.last()?);
    let span = last - first;
    Some(TopicStats {
        count: times.len() as u64,
        rate_hz: (times.len() > 1 && span > 0)
            .then(|| (times.len() - 1) as f64 / (span as f64 / 1e9)),
        longest_gap_s: times
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .map(|g| g as f64 / 1e9),
        first_s: secs(i128::from(first) - i128::from(zero)),
        last_s: secs(i128::from(last) - i128::from(zero)),
    })
}

/// The stats of `values` (NaN left out), or none where no value is a number.
pub fn field_stats(values: impl Iterator<Item = f64>) -> Option<FieldStats> {
    // Welford's running mean and variance: one pass, no loss on long series.
    let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| !v.is_nan()) {
        n += 1;
        let d = v - mean;
        mean += d / n as f64;
        m2 += d * (v - mean);
        min = min.min(v);
        max = max.max(v);
    }
    (n > 0).then(|| FieldStats {
        count: n,
        min,
        mean,
        max,
        std: (n > 1).then(|| (m2 / (n - 1) as f64).sqrt()),
    })
}

/// Compares `bags` (named `names`): every topic (or only `topics` where some are named) and the
/// numeric `fields` (`/topic.path`), zero of each run set by `align`.
pub fn compare(
    bags: &[&Bag],
    names: &[String],
    topics: &[String],
    fields: &[String],
    align: Align,
) -> Result<Comparison> {
    let mut zeros = Vec::with_capacity(bags.len());
    for (i, b) in bags.iter().enumerate() {
        let zero = match &align {
            Align::Start => b.summary().start_ns.unwrap_or(0),
            Align::Topic(t) => *topic_times(b, t)?.first().ok_or_else(|| {
                Error::NotFound(format!("{}: no message of {t} to align on", names[i]))
            })?,
            Align::Bookmark(label) => crate::bookmarks::read_bookmarks(b)
                .0
                .iter()
                .find(|n| n.label == *label)
                .map(|n| n.start_ns)
                .ok_or_else(|| {
                    Error::NotFound(format!("{}: no bookmark {label:?} to align on", names[i]))
                })?,
            Align::At(ts) => *ts.get(i).ok_or_else(|| {
                Error::Invalid(format!(
                    "{} times to align on for {} runs",
                    ts.len(),
                    bags.len()
                ))
            })?,
        };
        zeros.push(zero);
    }
    let all: BTreeSet<String> = bags
        .iter()
        .flat_map(|b| b.summary().topics.iter().map(|t| t.name.clone()))
        .filter(|t| topics.is_empty() || topics.contains(t))
        .collect();
    if let Some(t) = topics.iter().find(|t| !all.contains(*t)) {
        return Err(Error::NotFound(format!("no topic {t} in any of the runs")));
    }
    let mut rows = Vec::with_capacity(all.len());
    for t in all {
        let per: Vec<Option<TopicStats>> = bags
            .iter()
            .zip(&zeros)
            .map(|(b, &z)| match b.summary().topic(&t) {
                Some(_) => Ok(topic_stats(&topic_times(b, &t)?, z)),
                None => Ok(None),
            })
            .collect::<Result<_>>()?;
        rows.push((t, per));
    }
    let mut out = Vec::with_capacity(fields.len());
    let mut notes = Vec::new();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    for f in fields {
        let path = FieldPath::parse(f).map_err(|e| Error::Invalid(format!("{f}: {}", e.reason)))?;
        let mut per = Vec::with_capacity(bags.len());
        for (b, name) in bags.iter().zip(names) {
            if b.summary().topic(&path.topic).is_none() {
                per.push(None);
                continue;
            }
            let s = field_series(
                b,
                &path,
                None,
                None,
                threads,
                &AtomicBool::new(false),
                &|_| {},
            )?;
            notes.extend(s.problems.iter().map(|p| format!("{name}: {f}: {p}")));
            let numbers: Vec<f64> = s.points.iter().filter_map(|p| p.value.as_f64()).collect();
            if numbers.is_empty() && !s.points.is_empty() {
                notes.push(format!("{name}: {f} is not a number"));
            }
            per.push(field_stats(numbers.into_iter()));
        }
        out.push((f.clone(), per));
    }
    Ok(Comparison {
        runs: names.to_vec(),
        zeros,
        align,
        topics: rows,
        fields: out,
        notes,
    })
}

/// A number for the table: blank where there is none.
fn cell(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(
        || "—".into(),
        |v| {
            let s = format!("{v:.decimals$}");
            // A difference that rounds to zero is zero, not "-0.000".
            match s.strip_prefix('-') {
                Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
                _ => s,
            }
        },
    )
}

impl Comparison {
    /// Run `i`'s column head: `A`, `B`, ...
    fn letter(i: usize) -> String {
        char::from(b'A' + (i % 26) as u8).to_string()
    }

    /// The table as `bagscope compare` prints it: a block a topic and a field, a column a run,
    /// then each run minus the first.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let n = self.runs.len();
        let mut s = String::new();
        for (i, r) in self.runs.iter().enumerate() {
            let _ = writeln!(s, "{} = {r}", Self::letter(i));
        }
        let _ = writeln!(
            s,
            "times in s from each run's {}",
            match &self.align {
                Align::Start => "start".to_string(),
                Align::Topic(t) => format!("first {t} message"),
                Align::At(_) => "chosen time".to_string(),
                Align::Bookmark(l) => format!("bookmark {l:?}"),
            }
        );
        let mut head = format!("{:<28}", "");
        for i in 0..n {
            let _ = write!(head, "{:>14}", Self::letter(i));
        }
        for i in 1..n {
            let _ = write!(head, "{:>14}", format!("{} − A", Self::letter(i)));
        }
        let line = |s: &mut String, what: &str, vals: &[Option<f64>], dec: usize| {
            let _ = write!(s, "  {what:<26}");
            for v in vals {
                let _ = write!(s, "{:>14}", cell(*v, dec));
            }
            for v in &vals[1..] {
                let d = v.zip(vals[0]).map(|(b, a)| b - a);
                let _ = write!(s, "{:>14}", cell(d, dec));
            }
            s.push('\n');
        };
        for (t, per) in &self.topics {
            let _ = writeln!(s, "\n{t:<28}{}", &head[28..]);
            let get = |f: fn(&TopicStats) -> Option<f64>| -> Vec<Option<f64>> {
                per.iter().map(|p| p.as_ref().and_then(f)).collect()
            };
            line(&mut s, "messages", &get(|p| Some(p.count as f64)), 0);
            line(&mut s, "mean rate (Hz)", &get(|p| p.rate_hz), 3);
            line(&mut s, "longest gap (s)", &get(|p| p.longest_gap_s), 3);
            line(&mut s, "first (s)", &get(|p| Some(p.first_s)), 3);
            line(&mut s, "last (s)", &get(|p| Some(p.last_s)), 3);
        }
        for (f, per) in &self.fields {
            let _ = writeln!(s, "\n{f}\n{:<28}{}", "", &head[28..]);
            let get = |f: fn(&FieldStats) -> Option<f64>| -> Vec<Option<f64>> {
                per.iter().map(|p| p.as_ref().and_then(f)).collect()
            };
            line(&mut s, "values", &get(|p| Some(p.count as f64)), 0);
            line(&mut s, "min", &get(|p| Some(p.min)), 6);
            line(&mut s, "mean", &get(|p| Some(p.mean)), 6);
            line(&mut s, "max", &get(|p| Some(p.max)), 6);
            line(&mut s, "std", &get(|p| p.std), 6);
        }
        for note in &self.notes {
            let _ = writeln!(s, "note: {note}");
        }
        s
    }

    /// The same as one JSON object (`--json`): full precision, `null` where there is none.
    pub fn json(&self) -> Value {
        let topic = |p: &Option<TopicStats>| {
            p.as_ref().map_or(Value::Null, |p| {
                json!({"count": p.count, "rate_hz": p.rate_hz, "longest_gap_s": p.longest_gap_s,
                       "first_s": p.first_s, "last_s": p.last_s})
            })
        };
        let field = |p: &Option<FieldStats>| {
            p.as_ref().map_or(Value::Null, |p| {
                json!({"count": p.count, "min": p.min, "mean": p.mean, "max": p.max, "std": p.std})
            })
        };
        json!({
            "runs": self.runs,
            "zeros_ns": self.zeros,
            "align": match &self.align {
                Align::Start => json!("start"),
                Align::Topic(t) => json!({"topic": t}),
                Align::At(ts) => json!({"at_ns": ts}),
                Align::Bookmark(l) => json!({"bookmark": l}),
            },
            "topics": self.topics.iter().map(|(t, per)| json!({"topic": t, "runs": per.iter().map(topic).collect::<Vec<_>>()})).collect::<Vec<_>>(),
            "fields": self.fields.iter().map(|(f, per)| json!({"field": f, "runs": per.iter().map(field).collect::<Vec<_>>()})).collect::<Vec<_>>(),
            "notes": self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_stats_of_times() {
        let s = topic_stats(&[1_000_000_000, 1_100_000_000, 1_400_000_000], 500_000_000).unwrap();
        assert_eq!(s.count, 3);
        assert!((s.rate_hz.unwrap() - 2.0 / 0.4).abs() < 1e-12);
        assert!((s.longest_gap_s.unwrap() - 0.3).abs() < 1e-12);
        assert!((s.first_s - 0.5).abs() < 1e-12 && (s.last_s - 0.9).abs() < 1e-12);
        // One message: no rate, no gap; before the zero: negative.
        let s = topic_stats(&[5], 10).unwrap();
        assert_eq!((s.rate_hz, s.longest_gap_s), (None, None));
        assert!(s.first_s < 0.0);
        assert!(topic_stats(&[], 0).is_none());
    }

    #[test]
    fn field_stats_as_pandas_gives_them() {
        let s = field_stats([1.0, 2.0, f64::NAN, 4.0].into_iter()).unwrap();
        assert_eq!((s.count, s.min, s.max), (3, 1.0, 4.0));
        assert!((s.mean - 7.0 / 3.0).abs() < 1e-15);
        // Sample variance: ((1-m)² + (2-m)² + (4-m)²) / 2.
        let m = 7.0 / 3.0;
        let var = ((1.0f64 - m).powi(2) + (2.0f64 - m).powi(2) + (4.0f64 - m).powi(2)) / 2.0;
        assert!((s.std.unwrap() - var.sqrt()).abs() < 1e-15);
        assert_eq!(field_stats([7.0].into_iter()).unwrap().std, None);
        assert!(field_stats([f64::NAN].into_iter()).is_none());
    }
}
