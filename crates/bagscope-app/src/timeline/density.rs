//! A row's density: the messages per pixel column of the view, found by galloping binary
//! searches through the topic's times (and every SKIP-th time), its scale and its bars.

use super::{Doc, Times, HIST_BINS, SKIP};

/// First index at or after `from` whose time is `>= t`, searching outwards from `from` (the
/// next pixel's boundary is usually near the last one).
pub(super) fn gallop_by<T>(v: &[T], key: impl Fn(&T) -> u64, from: usize, t: u64) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = from;
    while hi < v.len() && key(&v[hi]) < t {
        lo = hi + 1;
        hi = from + step;
        step *= 2;
    }
    let hi = hi.min(v.len());
    lo + v[lo..hi].partition_point(|x| key(x) < t)
}

/// First index at or after `from` of `v` whose time is `>= t` (every time before `from` is
/// below `t`), through `skip` (every [`SKIP`]-th time of `v`) when given.
pub(super) fn first_at_by<T>(
    v: &[T],
    key: impl Fn(&T) -> u64 + Copy,
    skip: Option<&[u64]>,
    from: usize,
    t: u64,
) -> usize {
    match skip {
        Some(sk) => {
            let s = gallop_by(sk, |&x| x, from / SKIP, t);
            if s == 0 {
                return from;
            }
            let lo = (s - 1) * SKIP;
            let hi = (s * SKIP).min(v.len());
            (lo + v[lo..hi].partition_point(|x| key(x) < t)).max(from)
        }
        None => gallop_by(v, key, from, t),
    }
}

/// [`first_at_by`] over a topic's times, wherever they are kept.
pub(super) fn first_at(v: &Times, skip: Option<&[u64]>, from: usize, t: u64) -> usize {
    match v {
        Times::Table(tab, c) => first_at_by(&tab.per_connection[*c], |e| e.time_ns, skip, from, t),
        Times::Merged(m) => first_at_by(m, |&x| x, skip, from, t),
    }
}

/// Messages of topic `ti` per pixel over `view` (ns from the start), `px` pixels wide: from
/// the histogram when a pixel spans several of its bins (exact once indexed), else from the
/// message times.
pub(super) fn density(d: &Doc, ti: usize, view: (f64, f64), px: usize) -> Vec<u32> {
    let (start, end) = d.rec.range();
    let w = (view.1 - view.0) / px as f64;
    let span = (end - start).max(1) as f64;
    let bins_per_px = w / span * HIST_BINS as f64;
    if let (Some(v), true) = (d.rec.times(ti), bins_per_px < 2.0) {
        let mut out = Vec::with_capacity(px);
        let to_t = |j: usize| -> u64 {
            let x = start as f64 + view.0 + w * j as f64;
            if x <= 0.0 {
                0
            } else {
                x as u64
            }
        };
        // Dense rows find each pixel's first message in every SKIP-th time first, then
        // within SKIP times: a row of millions of messages touches a sixty-fourth of them.
        let skip = d
            .rec
            .times_skip(ti)
            .filter(|_| v.len() / px.max(1) > 4 * SKIP);
        let mut prev = v.partition_point(|t| t < to_t(0));
        for j in 0..px {
            let t1 = to_t(j + 1);
            // The last pixel includes the bag's end.
            let t1 = if j + 1 == px && t1 >= end {
                end + 1
            } else {
                t1
            };
            let next = first_at(v, skip, prev, t1);
            out.push((next - prev) as u32);
            prev = next;
        }
        return out;
    }
    let Some(h) = d.rec.hist.get(ti) else {
        return vec![0; px];
    };
    let mut cum = Vec::with_capacity(HIST_BINS + 1);
    let mut acc = 0u64;
    cum.push(0u64);
    for &c in h {
        acc += u64::from(c);
        cum.push(acc);
    }
    let at = |x: f64| -> f64 {
        let b = (x / span * HIST_BINS as f64).clamp(0.0, HIST_BINS as f64);
        let i = (b as usize).min(HIST_BINS - 1);
        let f = b - i as f64;
        cum[i] as f64 + (cum[i + 1] - cum[i]) as f64 * f
    };
    (0..px)
        .map(|j| {
            let a = at(view.0 + w * j as f64);
            let b = at(view.0 + w * (j + 1) as f64);
            (b - a).round().max(0.0) as u32
        })
        .collect()
}

/// Bar height of a pixel column: at least 2 px for any message, capped at the row.
pub(super) fn bar(c: u32, scale: f32, hmax: f32) -> f32 {
    if c == 0 {
        0.0
    } else {
        (c as f32 / scale * hmax).clamp(2.0, hmax).round()
    }
}

pub(super) fn row_scale(counts: &[u32]) -> f32 {
    let mut nz: Vec<u32> = counts.iter().copied().filter(|&c| c > 0).collect();
    if nz.is_empty() {
        return 1.0;
    }
    let k = (nz.len() * 95 / 100).min(nz.len() - 1);
    let (_, p, _) = nz.select_nth_unstable(k);
    (*p as f32 * 1.15).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pixel boundaries found through the skip list equal a plain search, on dense and
    /// sparse stretches, repeated times and boundaries before and after every time.
    #[test]
    fn first_at_through_skip_equals_plain_search() {
        let mut v = Vec::new();
        let mut t = 1_000u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Bursts, gaps and equal times.
            t += match x % 10 {
                0 => 0,
                1 => 5_000,
                _ => x % 7,
            } + u64::from(i % 50_000 == 0) * 1_000_000;
            v.push(t);
        }
        let skip: Vec<u64> = v.iter().step_by(SKIP).copied().collect();
        for step in [1u64, 3, 17, 250, 4_000, 90_000] {
            let mut prev_plain = 0;
            let mut prev_skip = 0;
            let mut edge = 0u64;
            while edge <= t + 2 * step {
                let a = first_at_by(&v, |&x| x, None, prev_plain, edge);
                let b = first_at_by(&v, |&x| x, Some(&skip), prev_skip, edge);
                assert_eq!(a, v.partition_point(|&y| y < edge), "plain at {edge}");
                assert_eq!(b, a, "skip at {edge}, step {step}");
                prev_plain = a;
                prev_skip = b;
                edge += step;
            }
        }
        // The same through a topic's times kept in its table, and merged.
        let tables = std::sync::Arc::new(bagscope_reader::MessageTables {
            per_connection: vec![v
                .iter()
                .map(|&time_ns| bagscope_reader::IndexEntry {
                    time_ns,
                    chunk: 0,
                    offset: 0,
                })
                .collect()],
            warnings: Vec::new(),
        });
        let table = Times::of(&tables, &[0]);
        assert!(matches!(table, Times::Table(..)));
        let merged = Times::Merged(std::sync::Arc::new(v.clone()));
        assert_eq!(table.len(), v.len());
        assert_eq!(table.every(SKIP), skip);
        assert_eq!(
            table.median_period(),
            bagscope_ops::reports::timing::median_period(&v)
        );
        assert_eq!(*table.to_vec(), v);
        for factor in [1.5, 3.0] {
            let want = bagscope_ops::reports::timing::gaps(&v, factor);
            assert_eq!(table.gaps(factor).1, want);
            assert_eq!(merged.gaps(factor), (table.median_period(), want));
        }
        for edge in (0..t + 10_000).step_by(49_999) {
            let want = v.partition_point(|&y| y < edge);
            for times in [&table, &merged] {
                assert_eq!(first_at(times, None, 0, edge), want);
                assert_eq!(first_at(times, Some(&skip), 0, edge), want);
                assert_eq!(times.partition_point(|y| y < edge), want);
                assert_eq!(times.get(want), v.get(want).copied());
            }
        }
    }
}
