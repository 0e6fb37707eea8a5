//! The min/max pyramid of a series and its decimation per pixel column: millions of points
//! cost a few thousand per frame.

use egui_plot::PlotPoint;

use super::Series;

/// Min/max of runs of 2^k consecutive points (sorted by time), for k = [`FIRST_RUN`], ...: 4
/// bytes a point. Finer runs would help only views of fewer than 32 points a pixel column,
/// which are drawn from the points themselves (at most some 60,000 of them).
pub(super) struct Pyramid {
    /// Per level: (first x, last x, min y, max y) of each run.
    pub(super) levels: Vec<Vec<[f64; 4]>>,
    /// How many points it was built from.
    pub(super) points: usize,
}

/// The runs of the pyramid's first level are 2^FIRST_RUN points long.
const FIRST_RUN: u32 = 4;

impl Pyramid {
    pub(super) fn build(p: &[PlotPoint]) -> Pyramid {
        let mut levels: Vec<Vec<[f64; 4]>> = Vec::new();
        let mut cur: Vec<[f64; 4]> = p
            .chunks(1 << FIRST_RUN)
            .map(|c| {
                let (lo, hi) = c
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), q| {
                        (lo.min(q.y), hi.max(q.y))
                    });
                [c[0].x, c[c.len() - 1].x, lo, hi]
            })
            .collect();
        while cur.len() > 1 {
            let next: Vec<[f64; 4]> = cur
                .chunks(2)
                .map(|c| {
                    let (a, b) = (c[0], c[c.len() - 1]);
                    [a[0], b[1], a[2].min(b[2]), a[3].max(b[3])]
                })
                .collect();
            levels.push(cur);
            cur = next;
        }
        levels.push(cur);
        Pyramid {
            levels,
            points: p.len(),
        }
    }

    /// Length of the runs of level `k`.
    pub(super) fn run(k: usize) -> usize {
        1usize << (k + FIRST_RUN as usize)
    }
}

/// Min and max per pixel column of `s` over `[x0, x1]`, `px` columns.
pub(super) fn decimate(s: &Series, x0: f64, x1: f64, px: usize) -> Vec<PlotPoint> {
    let w = (x1 - x0) / px as f64;
    let mut lo = vec![f64::INFINITY; px];
    let mut hi = vec![f64::NEG_INFINITY; px];
    let col = |x: f64| -> Option<usize> {
        let c = ((x - x0) / w).floor();
        (c >= 0.0 && c < px as f64).then_some(c as usize)
    };
    let mut put = |x: f64, ylo: f64, yhi: f64| {
        if let Some(c) = col(x) {
            lo[c] = lo[c].min(ylo);
            hi[c] = hi[c].max(yhi);
        }
    };
    match &s.pyramid {
        Some(pyr) if !s.points.is_empty() => {
            let i0 = s.points.partition_point(|p| p.x < x0);
            let i1 = s.points.partition_point(|p| p.x <= x1);
            let n = i1.saturating_sub(i0);
            // The coarsest level that still gives a few runs per column.
            let mut level = None;
            for (k, l) in pyr.levels.iter().enumerate() {
                let run = Pyramid::run(k);
                if n / run >= px * 2 {
                    level = Some((k, l, run));
                }
            }
            match level {
                Some((_, l, run)) => {
                    for r in &l[i0 / run..i1.div_ceil(run).min(l.len())] {
                        let xm = (r[0] + r[1]) / 2.0;
                        put(xm, r[2], r[3]);
                    }
                }
                None => {
                    for p in &s.points[i0..i1] {
                        put(p.x, p.y, p.y);
                    }
                }
            }
        }
        _ => {
            for p in &s.points {
                put(p.x, p.y, p.y);
            }
        }
    }
    let mut out = Vec::with_capacity(px * 2);
    for c in 0..px {
        if lo[c] <= hi[c] {
            let x = x0 + w * (c as f64 + 0.5);
            out.push(PlotPoint::new(x, lo[c]));
            if hi[c] != lo[c] {
                out.push(PlotPoint::new(x, hi[c]));
            }
        }
    }
    out
}
