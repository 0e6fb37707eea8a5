//! A topic's timing: its median period, the gaps much longer than it, and how far each
//! message's `header.stamp` is from the time it was recorded.

use std::sync::atomic::{AtomicBool, Ordering};

use bagscope_reader::bag::Bag;
use bagscope_reader::encoding::{Extractor, FieldPath, Value};
use bagscope_reader::error::PathError;
use bagscope_reader::error::{Error, Result};
use bagscope_reader::Filter;

/// Receive times of every message of `topic`, sorted.
pub fn topic_times(bag: &Bag, topic: &str) -> Result<Vec<u64>> {
    let t = bag
        .summary()
        .topic(topic)
        .ok_or_else(|| Error::NotFound(format!("no topic {topic:?}")))?;
    let tables = bag.tables()?;
    Ok(connection_times(&tables, &t.connections))
}

/// Receive times of every message of `conns` (a topic's connections), sorted.
pub fn connection_times(tables: &bagscope_reader::MessageTables, conns: &[usize]) -> Vec<u64> {
    let tabs: Vec<&Vec<bagscope_reader::IndexEntry>> = conns
        .iter()
        .filter_map(|&c| tables.per_connection.get(c))
        .collect();
    // Sized once: a vector grown by doubling moves (and maps) its memory again and again.
    let mut v: Vec<u64> = Vec::with_capacity(tabs.iter().map(|t| t.len()).sum());
    for t in &tabs {
        v.extend(t.iter().map(|e| e.time_ns));
    }
    // One connection's times are sorted already (the tables are in time order).
    if tabs.len() > 1 {
        v.sort_unstable();
    }
    v
}

/// Intervals [`median_period`] looks at, at most. Exactly, the median of a 2,000,000-message
/// topic took 55 ms (a 1 TB recording's 100 topics 5.5 s of the app's indexing); from this many
/// evenly spaced intervals it takes about 1 ms and moves by a fraction of a percent in rank.
pub const MEDIAN_SAMPLE: usize = 1 << 16;

/// The median time between two consecutive messages (ns), ignoring equal times: exact for up
/// to [`MEDIAN_SAMPLE`] intervals, else the median of that many evenly spaced ones.
pub fn median_period(times: &[u64]) -> Option<u64> {
    median_period_by(times.len(), |i| times[i])
}

/// [`median_period`] of `n` sorted times, the `i`-th given by `at(i)`.
pub fn median_period_by(n: usize, at: impl Fn(usize) -> u64) -> Option<u64> {
    let n = n.saturating_sub(1);
    let stride = n.div_ceil(MEDIAN_SAMPLE).max(1);
    let mut d: Vec<u64> = Vec::with_capacity(n / stride + 1);
    d.extend(
        (0..n)
            .step_by(stride)
            .map(|i| at(i + 1).saturating_sub(at(i)))
            .filter(|&d| d > 0),
    );
    if d.is_empty() {
        return None;
    }
    let mid = d.len() / 2;
    let (_, m, _) = d.select_nth_unstable(mid);
    Some(*m)
}

/// A silence on a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The message before the gap (ns).
    pub start_ns: u64,
    /// How long until the next one (ns).
    pub len_ns: u64,
}

/// The gaps longer than `factor` × the median period, longest first.
pub fn gaps(times: &[u64], factor: f64) -> Vec<Gap> {
    gaps_by(times.len(), |i| times[i], factor).1
}

/// [`gaps`] of `n` sorted times, the `i`-th given by `at(i)`, with the median period they were
/// measured against.
pub fn gaps_by(n: usize, at: impl Fn(usize) -> u64, factor: f64) -> (Option<u64>, Vec<Gap>) {
    let Some(m) = median_period_by(n, &at) else {
        return (None, Vec::new());
    };
    let limit = (m as f64 * factor.max(1.0)) as u64;
    let mut g: Vec<Gap> = Vec::new();
    let mut prev = if n > 0 { at(0) } else { 0 };
    for i in 1..n {
        let t = at(i);
        let len = t.saturating_sub(prev);
        if len > limit {
            g.push(Gap {
                start_ns: prev,
                len_ns: len,
            });
        }
        prev = t;
    }
    g.sort_by(|a, b| b.len_ns.cmp(&a.len_ns).then(a.start_ns.cmp(&b.start_ns)));
    (Some(m), g)
}

/// Reads `header.stamp` as ns: a ROS 1 `time`, or ROS 2's `builtin_interfaces/Time`, straight
/// from a message's bytes (no message tree built).
pub(crate) enum StampReader {
    Time(Extractor),
    SecNsec(Box<(Extractor, Extractor)>),
}

impl StampReader {
    /// `header.stamp`, else a top-level `stamp` (ROS 2's Log).
    pub(crate) fn new(
        plan: &bagscope_reader::encoding::Plan,
    ) -> std::result::Result<StampReader, PathError> {
        let mut why = None;
        for base in ["header.stamp", "stamp"] {
            match Self::at(plan, base) {
                Ok(r) => return Ok(r),
                Err(e) => {
                    why.get_or_insert(e);
                }
            }
        }
        Err(why.unwrap_or_else(|| PathError {
            path: "header.stamp".into(),
            reason: "no stamp".into(),
        }))
    }

    fn at(
        plan: &bagscope_reader::encoding::Plan,
        base: &str,
    ) -> std::result::Result<StampReader, PathError> {
        let p = |s: &str| FieldPath::parse(s).map(|f| f.segments);
        if let Ok(e) = Extractor::new(plan, &p(base)?) {
            return Ok(StampReader::Time(e));
        }
        let sec = Extractor::new(plan, &p(&format!("{base}.sec"))?)?;
        let nsec = Extractor::new(plan, &p(&format!("{base}.nanosec"))?)
            .or_else(|_| Extractor::new(plan, &p(&format!("{base}.nsec"))?))?;
        Ok(StampReader::SecNsec(Box::new((sec, nsec))))
    }

    pub(crate) fn read(&self, data: &[u8]) -> Option<i128> {
        match self {
            StampReader::Time(e) => match e.extract(data)? {
                Value::Time { sec, nsec } => {
                    Some(i128::from(sec) * 1_000_000_000 + i128::from(nsec))
                }
                _ => None,
            },
            StampReader::SecNsec(pair) => {
                let (s, n) = &**pair;
                let sec = match s.extract(data)? {
                    Value::I32(v) => i128::from(v),
                    Value::U32(v) => i128::from(v),
                    _ => return None,
                };
                let nsec = match n.extract(data)? {
                    Value::U32(v) => i128::from(v),
                    Value::I32(v) => i128::from(v),
                    _ => return None,
                };
                Some(sec * 1_000_000_000 + nsec)
            }
        }
    }
}

/// For every message of `topic` with a header: its receive time and `header.stamp` minus that
/// time (ns; negative when the stamp is earlier, as it usually is).
pub fn stamp_delays(bag: &Bag, topic: &str, cancel: &AtomicBool) -> Result<Vec<(u64, i64)>> {
    let conns = bag.connections_of_topics(&[topic])?;
    let mut readers = Vec::new();
    let mut why = Vec::new();
    for &c in &conns {
        match bag
            .plan(c)
            .map_err(Error::from)
            .and_then(|(p, _)| StampReader::new(&p).map_err(Error::from))
        {
            Ok(r) => readers.push((c, r)),
            Err(e) => why.push(e.to_string()),
        }
    }
    if readers.is_empty() {
        return Err(Error::Invalid(format!(
            "{topic} has no header.stamp ({})",
            why.join("; ")
        )));
    }
    let mut out = Vec::new();
    for m in bag.messages(&Filter {
        connections: Some(readers.iter().map(|(c, _)| *c).collect()),
        ..Default::default()
    })? {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let m = m?;
        let Some((_, r)) = readers.iter().find(|(c, _)| *c == m.conn) else {
            continue;
        };
        if let Some(s) = r.read(&m.data) {
            let d = (s - i128::from(m.time_ns)).clamp(i128::from(i64::MIN), i128::from(i64::MAX));
            out.push((m.time_ns, d as i64));
        }
    }
    Ok(out)
}

/// Moves each point of `topic` (its receive time) to its message's `header.stamp`, sorted by
/// the stamps: a series plotted or written at the time the data was taken. Points of messages
/// without a stamp are left out; returns how many.
pub fn at_header_stamps(
    bag: &Bag,
    topic: &str,
    points: &mut Vec<bagscope_reader::series::Point>,
    cancel: &AtomicBool,
) -> Result<usize> {
    let stamps = stamp_delays(bag, topic, cancel)?;
    // Both in receive-time order: walked together, equal times taken in turn.
    let mut k = 0;
    let mut left_out = 0usize;
    points.retain_mut(|p| {
        while k < stamps.len() && stamps[k].0 < p.time_ns {
            k += 1;
        }
        let moved = match stamps.get(k) {
            Some(&(t, d)) if t == p.time_ns => {
                k += 1;
                u64::try_from(i128::from(t) + i128::from(d)).ok()
            }
            _ => None,
        };
        match moved {
            Some(s) => {
                p.time_ns = s;
                true
            }
            None => {
                left_out += 1;
                false
            }
        }
    });
    points.sort_by_key(|p| p.time_ns);
    Ok(left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_period_of_many_intervals_from_a_sample() {
        // 1,000,000 intervals of 1000-1099 ns (a generator's jitter), and equal times.
        let mut t = Vec::with_capacity(1_000_001);
        let (mut x, mut r) = (0u64, 12345u64);
        t.push(x);
        for i in 0..1_000_000u64 {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x += if i % 7 == 0 {
                0
            } else {
                1000 + (r >> 33) % 100
            };
            t.push(x);
        }
        let mut all: Vec<u64> = t
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|&d| d > 0)
            .collect();
        let mid = all.len() / 2;
        let exact = *all.select_nth_unstable(mid).1;
        let sampled = median_period(&t).unwrap();
        assert!(
            exact.abs_diff(sampled) <= 2,
            "exact {exact}, sampled {sampled}"
        );
        // Small topics stay exact.
        assert_eq!(median_period(&t[..1001]), {
            let mut d: Vec<u64> = t[..1001]
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|&d| d > 0)
                .collect();
            let m = d.len() / 2;
            Some(*d.select_nth_unstable(m).1)
        });
        assert_eq!(median_period(&[5]), None);
        assert_eq!(median_period(&[5, 5, 5]), None);
    }

    #[test]
    fn gaps_longer_than_the_median_period() {
        let mut t: Vec<u64> = (0..100).map(|i| i * 10).collect();
        t.push(2000); // a 1010 ns gap after 990
        t.push(2010);
        t.extend([2500, 2510]); // 490 ns
        assert_eq!(median_period(&t), Some(10));
        let g = gaps(&t, 3.0);
        assert_eq!(
            g,
            vec![
                Gap {
                    start_ns: 990,
                    len_ns: 1010
                },
                Gap {
                    start_ns: 2010,
                    len_ns: 490
                }
            ]
        );
        assert!(gaps(&t, 100.0).len() == 1);
        assert!(gaps(&[5], 3.0).is_empty());
    }
}
