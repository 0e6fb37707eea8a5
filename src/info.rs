//! The text `bagscope info` prints and the app's bag info view shows.

use std::fmt::Write as _;

use crate::bag::Bag;
use crate::error::Result;
use crate::timefmt;

macro_rules! outln {
    ($o:expr, $($t:tt)*) => {{
        let _ = writeln!($o, $($t)*);
    }};
}

/// Measured rate of one topic: (median, min, max) in Hz.
pub fn topic_rates(bag: &Bag, topic: &str) -> Result<Option<(f64, f64, f64)>> {
    let tables = bag.tables()?;
    let Some(t) = bag.summary().topic(topic) else {
        return Ok(None);
    };
    let mut times: Vec<u64> = t
        .connections
        .iter()
        .flat_map(|&c| tables.per_connection[c].iter().map(|e| e.time_ns))
        .collect();
    times.sort_unstable();
    let mut dts: Vec<u64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .collect();
    if dts.is_empty() {
        return Ok(None);
    }
    dts.sort_unstable();
    let hz = |d: u64| 1e9 / d as f64;
    Ok(Some((
        hz(dts[dts.len() / 2]),
        hz(dts[dts.len() - 1]),
        hz(dts[0]),
    )))
}

/// What `bagscope info` prints, warnings included; `freq` measures rates from the tables.
pub fn summary_text(bag: &Bag, freq: bool) -> Result<String> {
    let s = bag.summary();
    let mut out = String::new();
    outln!(out, "path:        {}", s.path.display());
    outln!(
        out,
        "version:     {}{}",
        s.version.as_str(),
        if s.indexed {
            ""
        } else {
            " (not indexed: recovered by a linear scan)"
        }
    );
    if let (Some(a), Some(b)) = (s.start_ns, s.end_ns) {
        outln!(out, "duration:    {}", timefmt::duration(b - a));
        outln!(
            out,
            "start:       {} UTC ({})",
            timefmt::date(a),
            timefmt::secs(a)
        );
        outln!(
            out,
            "end:         {} UTC ({})",
            timefmt::date(b),
            timefmt::secs(b)
        );
    }
    outln!(out, "size:        {}", timefmt::bytes(s.file_size));
    outln!(out, "messages:    {}", s.message_count);
    let comp = s.compression_counts();
    let total: usize = comp.values().sum();
    if total == 0 {
        outln!(
            out,
            "compression: none (format {} has no chunks)",
            s.version.as_str()
        );
    }
    for (i, (name, n)) in comp.iter().enumerate() {
        let label = if i == 0 {
            "compression:"
        } else {
            "            "
        };
        outln!(out, "{label} {name} [{n}/{total} chunks]");
    }
    let mut types: Vec<(&str, &str)> = s
        .connections
        .iter()
        .map(|c| (c.datatype.as_str(), c.md5sum.as_str()))
        .collect();
    types.sort_unstable();
    types.dedup();
    let tw = types.iter().map(|t| t.0.len()).max().unwrap_or(0);
    for (i, (t, md5)) in types.iter().enumerate() {
        let label = if i == 0 {
            "types:      "
        } else {
            "            "
        };
        outln!(out, "{label} {t:<tw$} [{md5}]");
    }
    let nw = s.topics.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let cw = s
        .topics
        .iter()
        .map(|t| t.message_count.to_string().len())
        .max()
        .unwrap_or(0);
    let dur = s.duration_ns() as f64 / 1e9;
    for (i, t) in s.topics.iter().enumerate() {
        let label = if i == 0 {
            "topics:     "
        } else {
            "            "
        };
        let mut line = format!("{label} {:<nw$} {:>cw$} msgs", t.name, t.message_count);
        if freq {
            match topic_rates(bag, &t.name)? {
                Some((med, lo, hi)) => {
                    line.push_str(&format!(" @ {med:>8.2} Hz (min {lo:.2}, max {hi:.2})"))
                }
                None => line.push_str("                 "),
            }
        } else if dur > 0.0 && t.message_count > 1 {
            line.push_str(&format!(
                " @ {:>8.2} Hz",
                (t.message_count - 1) as f64 / dur
            ));
        }
        line.push_str(&format!(" : {}", t.datatype));
        if t.connections.len() > 1 {
            line.push_str(&format!(" ({} connections)", t.connections.len()));
        }
        outln!(out, "{line}");
    }
    let warnings = bag.warnings();
    for (i, w) in warnings.iter().enumerate() {
        let label = if i == 0 {
            "warnings:   "
        } else {
            "            "
        };
        outln!(out, "{label} {w}");
    }
    Ok(out)
}
