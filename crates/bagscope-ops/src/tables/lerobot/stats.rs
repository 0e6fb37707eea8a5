//! Statistics as LeRobot computes them (`lerobot/datasets/compute_stats.py`): per episode, each
//! feature's `min`, `max`, `mean`, `std` (from the mean of squares), `count` and the quantiles
//! `q01 q10 q50 q90 q99` read off a 5,000-bin histogram over `[min − 1e-10, max + 1e-10]`;
//! the dataset's from its episodes' (`aggregate_stats`: counts weigh the means, the variances
//! with their means' spread, and the quantiles).

use serde_json::{json, Map, Value};

/// Bins of the quantiles' histogram.
const BINS: usize = 5000;
/// The quantiles, and their keys.
pub const QUANTILES: [(f64, &str); 5] = [
    (0.01, "q01"),
    (0.10, "q10"),
    (0.50, "q50"),
    (0.90, "q90"),
    (0.99, "q99"),
];

/// One feature's statistics, a value per component.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// Per component.
    pub min: Vec<f64>,
    /// Per component.
    pub max: Vec<f64>,
    /// Per component.
    pub mean: Vec<f64>,
    /// Per component.
    pub std: Vec<f64>,
    /// Samples (frames; an image's: the frames sampled).
    pub count: u64,
    /// Per quantile of [`QUANTILES`], per component.
    pub quantiles: Vec<Vec<f64>>,
}

/// LeRobot's `_compute_single_quantile` of one component's histogram.
fn quantile(hist: &[f64], edges: &[f64], target: f64) -> f64 {
    let mut cum = Vec::with_capacity(hist.len());
    let mut acc = 0.0;
    for h in hist {
        acc += h;
        cum.push(acc);
    }
    // numpy's searchsorted (left): the first index whose cumulative count is >= target.
    let idx = cum.partition_point(|&c| c < target);
    if idx == 0 {
        return edges[0];
    }
    if idx >= cum.len() {
        return edges[edges.len() - 1];
    }
    let before = cum[idx - 1];
    let in_bin = cum[idx] - before;
    if in_bin == 0.0 {
        return edges[idx];
    }
    edges[idx] + (target - before) / in_bin * (edges[idx + 1] - edges[idx])
}

/// numpy's `linspace(a, b, n)`.
fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    let step = (b - a) / (n - 1) as f64;
    let mut v: Vec<f64> = (0..n).map(|i| a + i as f64 * step).collect();
    v[n - 1] = b;
    v
}

/// numpy's `histogram(x, bins=edges)` over uniform edges: the last bin holds its right edge.
fn histogram(xs: &[f64], edges: &[f64]) -> Vec<f64> {
    let n = edges.len() - 1;
    let (lo, hi) = (edges[0], edges[n]);
    let width = (hi - lo) / n as f64;
    let mut h = vec![0.0; n];
    for &x in xs {
        if !(x >= lo && x <= hi) {
            continue;
        }
        // The bin by arithmetic, then put right against the edges as numpy compares them.
        let mut i = (((x - lo) / width) as usize).min(n - 1);
        while i > 0 && x < edges[i] {
            i -= 1;
        }
        while i + 1 < n && x >= edges[i + 1] {
            i += 1;
        }
        h[i] += 1.0;
    }
    h
}

/// The statistics of `rows` (each a sample of `dim` components), `square` the square of a
/// value as the feature's dtype computes it (LeRobot squares uint8 pixels in uint8).
pub fn of_rows(rows: &[Vec<f64>], dim: usize, count: u64, square: impl Fn(f64) -> f64) -> Stats {
    let cols: Vec<Vec<f64>> = (0..dim)
        .map(|c| rows.iter().map(|r| r[c]).collect())
        .collect();
    of_columns(&cols, count, square)
}

/// [`of_rows`] of the samples given a column per component.
pub fn of_columns(cols: &[Vec<f64>], count: u64, square: impl Fn(f64) -> f64) -> Stats {
    let dim = cols.len();
    let n = cols.first().map_or(0, Vec::len);
    let mut s = Stats {
        min: vec![f64::INFINITY; dim],
        max: vec![f64::NEG_INFINITY; dim],
        mean: vec![0.0; dim],
        std: vec![0.0; dim],
        count,
        quantiles: vec![vec![0.0; dim]; QUANTILES.len()],
    };
    if n == 0 {
        return s;
    }
    for (c, col) in cols.iter().enumerate() {
        let (mut sum, mut sq) = (0.0, 0.0);
        for &x in col {
            s.min[c] = s.min[c].min(x);
            s.max[c] = s.max[c].max(x);
            sum += x;
            sq += square(x);
        }
        let mean = sum / n as f64;
        s.mean[c] = mean;
        if n < 2 {
            // `_compute_basic_stats`: numpy's std, quantiles at the mean.
            s.std[c] = 0.0;
            for q in &mut s.quantiles {
                q[c] = mean;
            }
            continue;
        }
        s.std[c] = (sq / n as f64 - mean * mean).max(0.0).sqrt();
        let edges = linspace(s.min[c] - 1e-10, s.max[c] + 1e-10, BINS + 1);
        let hist = histogram(col, &edges);
        for (k, (q, _)) in QUANTILES.iter().enumerate() {
            s.quantiles[k][c] = quantile(&hist, &edges, q * n as f64);
        }
    }
    s
}

/// LeRobot's `aggregate_feature_stats` of one feature over episodes.
pub fn aggregate(eps: &[&Stats]) -> Option<Stats> {
    let first = eps.first()?;
    let dim = first.mean.len();
    let total: u64 = eps.iter().map(|s| s.count).sum();
    let t = total.max(1) as f64;
    let mut out = Stats {
        min: vec![f64::INFINITY; dim],
        max: vec![f64::NEG_INFINITY; dim],
        mean: vec![0.0; dim],
        std: vec![0.0; dim],
        count: total,
        quantiles: vec![vec![0.0; dim]; QUANTILES.len()],
    };
    for c in 0..dim {
        let mean = eps.iter().map(|s| s.mean[c] * s.count as f64).sum::<f64>() / t;
        out.mean[c] = mean;
        let var = eps
            .iter()
            .map(|s| (s.std[c] * s.std[c] + (s.mean[c] - mean).powi(2)) * s.count as f64)
            .sum::<f64>()
            / t;
        out.std[c] = var.sqrt();
        for s in eps {
            out.min[c] = out.min[c].min(s.min[c]);
            out.max[c] = out.max[c].max(s.max[c]);
        }
        for k in 0..QUANTILES.len() {
            out.quantiles[k][c] = eps
                .iter()
                .map(|s| s.quantiles[k][c] * s.count as f64)
                .sum::<f64>()
                / t;
        }
    }
    Some(out)
}

impl Stats {
    /// As `stats.json` holds a feature's (an image's values nested `[[[v]], …]`, shape (3,1,1)).
    pub fn to_json(&self, image: bool) -> Value {
        let arr = |v: &[f64]| -> Value {
            if image {
                Value::Array(v.iter().map(|x| json!([[x]])).collect())
            } else {
                json!(v)
            }
        };
        let mut m = Map::new();
        m.insert("min".into(), arr(&self.min));
        m.insert("max".into(), arr(&self.max));
        m.insert("mean".into(), arr(&self.mean));
        m.insert("std".into(), arr(&self.std));
        m.insert("count".into(), json!([self.count]));
        for (k, (_, key)) in QUANTILES.iter().enumerate() {
            m.insert((*key).into(), arr(&self.quantiles[k]));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_from_the_histogram_as_lerobot_reads_them() {
        // 0, 1, ..., 99: what LeRobot 0.4.4's RunningQuantileStats gives for them.
        let rows: Vec<Vec<f64>> = (0..100).map(|i| vec![f64::from(i)]).collect();
        let s = of_rows(&rows, 1, 100, |x| x * x);
        assert_eq!((s.min[0], s.max[0], s.mean[0]), (0.0, 99.0, 49.5));
        assert!((s.std[0] - 28.866_070_047_722_12).abs() < 1e-9);
        let lerobot = [
            -1e-10,
            9.0089999999182,
            49.004999999999,
            89.0010000000798,
            98.010000000098,
        ];
        for (k, want) in lerobot.iter().enumerate() {
            assert!(
                (s.quantiles[k][0] - want).abs() < 1e-9,
                "{k}: {:?}",
                s.quantiles
            );
        }
        let a = aggregate(&[&s, &s]).unwrap();
        assert_eq!(a.count, 200);
        assert!((a.std[0] - s.std[0]).abs() < 1e-12);
    }
}
