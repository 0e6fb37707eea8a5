//! Times, durations and sizes for people, without a time zone database (UTC), and times as
//! typed on a command line ([`parse_time`], whose error, [`ArgError`], is every typed
//! argument's: times, queries, sizes).

/// `2024-09-13 12:34:56.789 UTC`-style date of a time in ns since the epoch.
pub fn date(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let ms = (ns % 1_000_000_000) / 1_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{ms:03}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// ISO 8601 in UTC with microseconds, as GPX, KML and GeoJSON carry times:
/// `2015-06-29T19:51:29.924924Z`.
pub fn iso8601(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let us = (ns % 1_000_000_000) / 1_000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{us:06}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Seconds with 9 decimals: `1726230896.780000000`.
pub fn secs(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// A duration like rosbag's: `1:43s (103s)` or `12.3s`.
pub fn duration(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s >= 60.0 {
        let whole = s as u64;
        let (h, m, sec) = (whole / 3600, (whole / 60) % 60, whole % 60);
        if h > 0 {
            format!("{h}:{m:02}:{sec:02}s ({whole}s)")
        } else {
            format!("{m}:{sec:02}s ({whole}s)")
        }
    } else {
        format!("{s:.1}s")
    }
}

/// A short span as people say it: `1.25 s`, `4.0 ms`, `83 µs`, `120 ns`.
pub fn period(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.0} µs", s * 1e6)
    } else {
        format!("{ns} ns")
    }
}

/// Bytes as `222.2 MB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A count with thousands separators ("1,234,567").
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A bad argument from the caller, as typed (a time, a query, a size): what it was meant to
/// be, the text given, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ArgError {
    /// What the argument is (`time`, `query`, `size`).
    pub what: &'static str,
    /// The text given.
    pub input: String,
    /// What is wrong with it (the text quoted).
    pub reason: String,
}

impl ArgError {
    /// An argument `what` given as `input`, wrong for `reason`.
    pub fn new(what: &'static str, input: &str, reason: String) -> ArgError {
        ArgError {
            what,
            input: input.to_string(),
            reason,
        }
    }
}

/// Parses a command-line time: seconds since the epoch (`1726230896.5`) or `+S`, seconds after
/// `start_ns`. Returns ns.
///
/// ```
/// use bagscope_ops::timefmt::parse_time;
/// assert_eq!(parse_time("+1.5", 10), Ok(1_500_000_010));
/// assert_eq!(parse_time("1726230896.5", 0), Ok(1_726_230_896_500_000_000));
/// assert_eq!(parse_time("soon", 0).unwrap_err().what, "time");
/// ```
pub fn parse_time(s: &str, start_ns: u64) -> Result<u64, ArgError> {
    let err = |reason: String| ArgError::new("time", s, reason);
    let (rel, num) = match s.strip_prefix('+') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v: f64 = num.parse().map_err(|_| {
        err(format!(
            "{s:?} is not a time: give seconds since the epoch or +S after the bag's start"
        ))
    })?;
    if !v.is_finite() || v < 0.0 {
        return Err(err(format!("{s:?} is not a valid time")));
    }
    let ns = (v * 1e9).round() as u64;
    Ok(if rel { start_ns.saturating_add(ns) } else { ns })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn formats_dates_and_parses_times() {
        assert_eq!(date(0), "1970-01-01 00:00:00.000");
        assert_eq!(date(1_585_835_670_955_661_441), "2020-04-02 13:54:30.955");
        assert_eq!(duration(103_000_000_000), "1:43s (103s)");
        assert_eq!(parse_time("+1.5", 10), Ok(1_500_000_010));
        assert_eq!(parse_time("2", 10), Ok(2_000_000_000));
        assert_eq!(parse_time("x", 0).unwrap_err().what, "time");
        assert!(parse_time("-1", 0).is_err());
    }
}
