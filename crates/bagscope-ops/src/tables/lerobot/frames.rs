//! Streams onto the frame clock: ticks `t0 + k / fps` over an episode, each stream's value at
//! a tick by the mapping's rule (the last sample at or before it, or the nearest within the
//! tolerance), each camera's frame nearest the tick within the tolerance; a tick where a stream
//! has none is dropped, or filled (with the stream's last value before it, else its first),
//! and counted. A camera frame cannot be filled without encoding one: such a tick is dropped.

use super::mapping::{Align, Missing};

/// One stream's samples, in time order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stream {
    /// Receive times (ns).
    pub times: Vec<u64>,
    /// Values (NaN where the sample has none).
    pub values: Vec<f64>,
}

impl Stream {
    /// The value of the last sample at or before `t`.
    fn held(&self, t: u64) -> Option<f64> {
        let i = self.times.partition_point(|&x| x <= t);
        i.checked_sub(1)
            .map(|i| self.values[i])
            .filter(|v| !v.is_nan())
    }

    /// The value of the sample nearest `t` within `tol` (the earlier of two as near).
    fn nearest(&self, t: u64, tol: u64) -> Option<f64> {
        nearest_index(&self.times, t, tol)
            .map(|i| self.values[i])
            .filter(|v| !v.is_nan())
    }

    /// The value to fill with at `t`: held, else the first.
    fn fill(&self, t: u64) -> Option<f64> {
        self.held(t)
            .or_else(|| self.values.iter().copied().find(|v| !v.is_nan()))
    }
}

/// The index of the time in `times` (sorted) nearest `t` within `tol`.
pub fn nearest_index(times: &[u64], t: u64, tol: u64) -> Option<usize> {
    let i = times.partition_point(|&x| x < t);
    let mut best: Option<(u64, usize)> = None;
    for j in [i.checked_sub(1), Some(i)].into_iter().flatten() {
        if let Some(&x) = times.get(j) {
            let d = x.abs_diff(t);
            if d <= tol && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, j));
            }
        }
    }
    best.map(|(_, j)| j)
}

/// The clock's ticks from `t0` to `end` (inclusive) at `fps`.
pub fn ticks(t0: u64, end: u64, fps: u32) -> Vec<u64> {
    let mut v = Vec::new();
    let mut k: u64 = 0;
    loop {
        let t = t0 + (u128::from(k) * 1_000_000_000 / u128::from(fps)) as u64;
        if t > end {
            break;
        }
        v.push(t);
        k += 1;
    }
    v
}

/// The frames of an episode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aligned {
    /// Each kept frame's tick (ns).
    pub times: Vec<u64>,
    /// Each kept frame's values, a row per stream order.
    pub rows: Vec<Vec<f64>>,
    /// Each camera's frame (its index in the camera's times) for each kept frame.
    pub camera_frames: Vec<Vec<usize>>,
    /// Ticks left out for a missing value.
    pub dropped: u64,
    /// Kept ticks with a value filled.
    pub filled: u64,
}

/// Aligns `streams` and `cameras` (each camera's frame times, sorted) onto `ticks`.
pub fn align(
    ticks: &[u64],
    streams: &[Stream],
    cameras: &[Vec<u64>],
    rule: (Align, u64, Missing),
) -> Aligned {
    let (align, tol, missing) = rule;
    let mut out = Aligned {
        camera_frames: vec![Vec::new(); cameras.len()],
        ..Default::default()
    };
    'tick: for &t in ticks {
        let mut cams = Vec::with_capacity(cameras.len());
        for c in cameras {
            match nearest_index(c, t, tol) {
                Some(i) => cams.push(i),
                None => {
                    out.dropped += 1;
                    continue 'tick;
                }
            }
        }
        let mut row = Vec::with_capacity(streams.len());
        let mut filled = false;
        for s in streams {
            let v = match align {
                Align::Hold => s.held(t),
                Align::Nearest => s.nearest(t, tol),
            };
            match (v, missing) {
                (Some(v), _) => row.push(v),
                (None, Missing::Fill) => match s.fill(t) {
                    Some(v) => {
                        row.push(v);
                        filled = true;
                    }
                    None => {
                        out.dropped += 1;
                        continue 'tick;
                    }
                },
                (None, Missing::Drop) => {
                    out.dropped += 1;
                    continue 'tick;
                }
            }
        }
        out.filled += u64::from(filled);
        out.times.push(t);
        out.rows.push(row);
        for (k, i) in cams.into_iter().enumerate() {
            out.camera_frames[k].push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(pts: &[(u64, f64)]) -> Stream {
        Stream {
            times: pts.iter().map(|p| p.0).collect(),
            values: pts.iter().map(|p| p.1).collect(),
        }
    }

    #[test]
    fn hold_nearest_drop_and_fill() {
        let s = stream(&[(100, 1.0), (250, 2.0), (400, 3.0)]);
        let t = ticks(100, 400, 10_000_000); // every 100 ns
        assert_eq!(t, [100, 200, 300, 400]);
        let a = align(
            &t,
            std::slice::from_ref(&s),
            &[],
            (Align::Hold, 0, Missing::Drop),
        );
        assert_eq!(a.rows, [[1.0], [1.0], [2.0], [3.0]]);
        let a = align(
            &t,
            std::slice::from_ref(&s),
            &[],
            (Align::Nearest, 40, Missing::Drop),
        );
        assert_eq!((a.times.clone(), a.dropped), (vec![100, 400], 2));
        let a = align(
            &t,
            std::slice::from_ref(&s),
            &[],
            (Align::Nearest, 40, Missing::Fill),
        );
        assert_eq!(
            (a.rows.clone(), a.filled),
            (vec![vec![1.0], vec![1.0], vec![2.0], vec![3.0]], 2)
        );
        // A camera without a frame near a tick drops it, fill or not.
        let cam = vec![95, 305, 405];
        let a = align(&t, &[s], &[cam], (Align::Hold, 10, Missing::Fill));
        assert_eq!(
            (a.times, a.camera_frames, a.dropped),
            (vec![100, 300, 400], vec![vec![0, 1, 2]], 1)
        );
    }

    #[test]
    fn before_the_first_sample() {
        let s = stream(&[(300, 5.0)]);
        let t = [100, 300];
        let a = align(
            &t,
            std::slice::from_ref(&s),
            &[],
            (Align::Hold, 0, Missing::Drop),
        );
        assert_eq!((a.times, a.dropped), (vec![300], 1));
        let a = align(&t, &[s], &[], (Align::Hold, 0, Missing::Fill));
        assert_eq!((a.rows, a.filled), (vec![vec![5.0], vec![5.0]], 1));
    }
}
