//! Modifiers: transforms of a series, `.@derivative`, `.@movavg(0.5s)`, `.@scale(2)`, and
//! Lichtblick's Math set, applied in the order written.

use super::ast::{Arg, Modifier};

/// A series: time (ns) and value, in time order.
pub type Points = Vec<(u64, f64)>;

/// Every modifier: its name, its arguments as written, and what it does (for completion and
/// the docs).
pub const MODIFIERS: &[(&str, &str, &str)] = &[
    ("derivative", "", "backward difference (v[i] - v[i-1]) / (t[i] - t[i-1]), per second; the first sample has none"),
    ("integral", "", "cumulative trapezoid over time (seconds), 0 at the first sample"),
    ("movavg", "(0.5s) or (n)", "moving average over a time window (t - w, t] or over the last n samples"),
    ("lowpass", "(5hz)", "first-order low-pass filter with that cut-off frequency"),
    ("scale", "(k)", "multiplied by k"),
    ("offset", "(c)", "c added"),
    ("delta", "", "v[i] - v[i-1]; the first sample has none"),
    ("dt", "", "seconds since the previous sample; the first sample has none"),
    ("timedelta", "", "the same as dt (Lichtblick's name)"),
    ("abs", "", "absolute value"),
    ("negative", "", "-v"),
    ("deg2rad", "", "degrees to radians"),
    ("rad2deg", "", "radians to degrees"),
    ("sqrt", "", "square root"),
    ("exp", "", "e^v"),
    ("log", "", "natural logarithm"),
    ("log1p", "", "ln(1 + v)"),
    ("log2", "", "base-2 logarithm"),
    ("log10", "", "base-10 logarithm"),
    ("sin", "", "sine"),
    ("cos", "", "cosine"),
    ("tan", "", "tangent"),
    ("asin", "", "arc sine"),
    ("acos", "", "arc cosine"),
    ("atan", "", "arc tangent"),
    ("ceil", "", "rounded up"),
    ("floor", "", "rounded down"),
    ("round", "", "rounded to the nearest integer, halves up (as JavaScript's Math.round)"),
    ("trunc", "", "integer part"),
    ("sign", "", "-1, 0 or 1"),
    ("mps2kph", "", "m/s to km/h"),
    ("kph2mps", "", "km/h to m/s"),
    ("mps2mph", "", "m/s to mph"),
    ("mph2mps", "", "mph to m/s"),
    ("mph2kph", "", "mph to km/h"),
    ("kph2mph", "", "km/h to mph"),
];

/// A function of one value by its name: the per-sample modifiers, also a formula's functions.
pub fn unary(name: &str) -> Option<fn(f64) -> f64> {
    const MPH: f64 = 0.44704;
    Some(match name {
        "abs" => f64::abs,
        "negative" => |v: f64| -v,
        "deg2rad" => f64::to_radians,
        "rad2deg" => f64::to_degrees,
        "sqrt" => f64::sqrt,
        "exp" => f64::exp,
        "log" | "ln" => f64::ln,
        "log1p" => f64::ln_1p,
        "log2" => f64::log2,
        "log10" => f64::log10,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "asin" => f64::asin,
        "acos" => f64::acos,
        "atan" => f64::atan,
        "sinh" => f64::sinh,
        "cosh" => f64::cosh,
        "tanh" => f64::tanh,
        "ceil" => f64::ceil,
        "floor" => f64::floor,
        "round" => js_round,
        "trunc" => f64::trunc,
        "sign" => sign,
        "mps2kph" => |v: f64| v * 3.6,
        "kph2mps" => |v: f64| v / 3.6,
        "mps2mph" => |v: f64| v / MPH,
        "mph2mps" => |v: f64| v * MPH,
        "mph2kph" => |v: f64| v * MPH * 3.6,
        "kph2mph" => |v: f64| v / 3.6 / MPH,
        _ => return None,
    })
}

/// JavaScript's `Math.round`: halves go up (-2.5 gives -2).
fn js_round(v: f64) -> f64 {
    let f = v.floor();
    if v - f >= 0.5 {
        f + 1.0
    } else {
        f
    }
}

/// JavaScript's `Math.sign`: 0 for ±0, NaN for NaN.
fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        v
    }
}

/// Whether `m` names a modifier with the arguments it takes.
pub(crate) fn check(m: &Modifier) -> Result<(), String> {
    let n = m.args.len();
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!(".@{} takes {what}", m.name))
        }
    };
    match m.name.as_str() {
        "" => Err(format!(
            "expected a modifier's name after `.@` ({})",
            MODIFIERS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
        )),
        "movavg" => match m.args.as_slice() {
            [Arg::Seconds(s)] if *s > 0.0 => Ok(()),
            [Arg::Number(k)] if *k >= 1.0 && k.fract() == 0.0 => Ok(()),
            _ => want(
                false,
                "a time window (`(0.5s)`) or a number of samples (`(20)`)",
            ),
        },
        "lowpass" => match m.args.as_slice() {
            [Arg::Hertz(f) | Arg::Number(f)] if *f > 0.0 => Ok(()),
            _ => want(false, "a cut-off frequency above 0 (`(5hz)`)"),
        },
        "scale" | "offset" => want(
            matches!(m.args.as_slice(), [Arg::Number(_)]),
            "one number (`(2.5)`)",
        ),
        name if unary(name).is_some()
            || matches!(
                name,
                "derivative" | "integral" | "delta" | "dt" | "timedelta"
            ) =>
        {
            want(n == 0, "no arguments")
        }
        name => Err(format!(
            "unknown modifier `.@{name}` (one of {})",
            MODIFIERS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// `m` (a modifier as the parser accepts it) applied to `pts`.
pub fn apply(m: &Modifier, pts: Points) -> Points {
    let secs = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e9;
    match (m.name.as_str(), m.args.as_slice()) {
        ("derivative", _) => pts
            .windows(2)
            .map(|w| {
                let dt = secs(w[0].0, w[1].0);
                let v = if dt > 0.0 {
                    (w[1].1 - w[0].1) / dt
                } else {
                    f64::NAN
                };
                (w[1].0, v)
            })
            .collect(),
        ("delta", _) => pts.windows(2).map(|w| (w[1].0, w[1].1 - w[0].1)).collect(),
        ("dt" | "timedelta", _) => pts
            .windows(2)
            .map(|w| (w[1].0, secs(w[0].0, w[1].0)))
            .collect(),
        ("integral", _) => integral(pts),
        ("movavg", [Arg::Seconds(w)]) => movavg_time(pts, (w * 1e9).round() as u64),
        ("movavg", [Arg::Number(k)]) => movavg_count(pts, *k as usize),
        ("lowpass", [Arg::Hertz(f) | Arg::Number(f)]) => lowpass(pts, *f),
        ("scale", [Arg::Number(k)]) => map(pts, |v| v * k),
        ("offset", [Arg::Number(c)]) => map(pts, |v| v + c),
        (name, _) => match unary(name) {
            Some(f) => map(pts, f),
            None => pts,
        },
    }
}

fn map(mut pts: Points, f: impl Fn(f64) -> f64) -> Points {
    for p in &mut pts {
        p.1 = f(p.1);
    }
    pts
}

/// Cumulative trapezoid (as scipy's `cumulative_trapezoid(y, x, initial=0)`); a sample that is
/// not a number is NaN and passed over.
fn integral(pts: Points) -> Points {
    let mut out = Vec::with_capacity(pts.len());
    let mut sum = 0.0;
    let mut last: Option<(u64, f64)> = None;
    for (t, v) in pts {
        if !v.is_finite() {
            out.push((t, f64::NAN));
            continue;
        }
        if let Some((t0, v0)) = last {
            sum += (v + v0) * 0.5 * (t.saturating_sub(t0) as f64 / 1e9);
        }
        last = Some((t, v));
        out.push((t, sum));
    }
    out
}

/// A sum that can take values out again, compensated (Neumaier) so a long run does not drift.
#[derive(Default)]
struct RunningSum {
    sum: f64,
    comp: f64,
    n: usize,
}

impl RunningSum {
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        if self.sum.abs() >= v.abs() {
            self.comp += (self.sum - t) + v;
        } else {
            self.comp += (v - t) + self.sum;
        }
        self.sum = t;
        self.n += 1;
    }

    fn remove(&mut self, v: f64) {
        self.add(-v);
        self.n -= 2;
    }

    fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            (self.sum + self.comp) / self.n as f64
        }
    }
}

/// Mean over `(t - w, t]` at each sample, NaNs left out (pandas' `rolling("0.5s").mean()`).
fn movavg_time(pts: Points, w: u64) -> Points {
    let mut out = Vec::with_capacity(pts.len());
    let mut acc = RunningSum::default();
    let mut from = 0usize;
    for i in 0..pts.len() {
        let (t, v) = pts[i];
        if v.is_finite() {
            acc.add(v);
        }
        while from < i && t.saturating_sub(pts[from].0) >= w {
            if pts[from].1.is_finite() {
                acc.remove(pts[from].1);
            }
            from += 1;
        }
        out.push((t, acc.mean()));
    }
    out
}

/// Mean of the last `k` samples; NaN until there are `k` (pandas' `rolling(k).mean()`).
fn movavg_count(pts: Points, k: usize) -> Points {
    let mut out = Vec::with_capacity(pts.len());
    let mut acc = RunningSum::default();
    let mut nan = 0usize;
    for i in 0..pts.len() {
        let v = pts[i].1;
        if v.is_finite() {
            acc.add(v);
        } else {
            nan += 1;
        }
        if i >= k {
            let old = pts[i - k].1;
            if old.is_finite() {
                acc.remove(old);
            } else {
                nan -= 1;
            }
        }
        let full = i + 1 >= k && nan == 0;
        out.push((pts[i].0, if full { acc.mean() } else { f64::NAN }));
    }
    out
}

/// First-order low-pass: y += a (x - y), a = dt / (RC + dt), RC = 1 / (2 pi f).
fn lowpass(pts: Points, f: f64) -> Points {
    let rc = 1.0 / (2.0 * std::f64::consts::PI * f);
    let mut out = Vec::with_capacity(pts.len());
    let mut state: Option<(u64, f64)> = None;
    for (t, x) in pts {
        if !x.is_finite() {
            out.push((t, f64::NAN));
            continue;
        }
        let y = match state {
            None => x,
            Some((t0, y0)) => {
                let dt = t.saturating_sub(t0) as f64 / 1e9;
                y0 + dt / (rc + dt) * (x - y0)
            }
        };
        state = Some((t, y));
        out.push((t, y));
    }
    out
}
