//! A track made ready for drawing on the worker: each fix on the Web Mercator square, the
//! fixes kept at each zoom (those at least a pixel from the last kept: a million fixes are a
//! few thousand on screen at any zoom), in runs with bounding boxes so that a frame draws only
//! the runs in view, and a value per fix to colour the track by.

use bagscope_ops::spatial::geo::{mercator, Track};

/// Zoom levels prepared (0 = the world in one 256-pixel tile).
pub const LEVELS: usize = 23;
/// Fixes a run.
const RUN: usize = 256;
/// The shortest time a speed is measured over.
const SPEED_WINDOW_NS: u64 = 500_000_000;

/// A run of kept fixes: `idx[start..end]`, and its box on the world square.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub start: usize,
    pub end: usize,
    pub min: [f64; 2],
    pub max: [f64; 2],
}

/// The fixes kept at one zoom.
#[derive(Debug, Default)]
pub struct Level {
    /// Indices into the track.
    pub idx: Vec<u32>,
    pub runs: Vec<Run>,
}

/// What to colour a track by.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
pub enum ColourBy {
    /// The topic's colour.
    #[default]
    Topic,
    /// Ground speed between fixes (m/s).
    Speed,
    /// Altitude (m).
    Altitude,
    /// Horizontal accuracy (m).
    Accuracy,
    /// The fix status (0 fix, 1 SBAS, 2 GBAS).
    Status,
    /// Any expression over the recording, matched to each fix by nearest time.
    Expression(String),
}

impl ColourBy {
    /// A name for menus and legends.
    pub fn label(&self) -> String {
        match self {
            ColourBy::Topic => "topic colour".into(),
            ColourBy::Speed => "speed (m/s)".into(),
            ColourBy::Altitude => "altitude (m)".into(),
            ColourBy::Accuracy => "accuracy (m)".into(),
            ColourBy::Status => "fix status".into(),
            ColourBy::Expression(e) => e.clone(),
        }
    }
}

/// A track ready to draw.
pub struct Prepared {
    pub track: Track,
    /// Each fix on the world square.
    pub world: Vec<[f64; 2]>,
    pub levels: Vec<Level>,
    /// The value each fix is coloured by (NaN: none), and its range.
    pub values: Vec<f32>,
    pub range: Option<(f32, f32)>,
    /// Why the colouring's values could not be had.
    pub colour_error: Option<String>,
}

/// The fixes of `world` kept at `level`, in runs.
fn level(world: &[[f64; 2]], level: usize) -> Level {
    let px = 1.0 / (256.0 * f64::from(1u32 << level));
    let min2 = px * px;
    let mut idx: Vec<u32> = Vec::new();
    let mut last: Option<[f64; 2]> = None;
    for (i, p) in world.iter().enumerate() {
        let keep = match last {
            None => true,
            Some(l) => {
                let (dx, dy) = (p[0] - l[0], p[1] - l[1]);
                dx * dx + dy * dy >= min2 || i + 1 == world.len()
            }
        };
        if keep {
            idx.push(i as u32);
            last = Some(*p);
        }
    }
    let mut runs = Vec::new();
    let mut start = 0;
    while start < idx.len() {
        // Each run ends on the next run's first fix, so the line has no gap between them.
        let end = (start + RUN).min(idx.len());
        let stop = (end + 1).min(idx.len());
        let mut min = [f64::MAX; 2];
        let mut max = [f64::MIN; 2];
        for &i in &idx[start..stop] {
            let p = world[i as usize];
            min = [min[0].min(p[0]), min[1].min(p[1])];
            max = [max[0].max(p[0]), max[1].max(p[1])];
        }
        runs.push(Run {
            start,
            end: stop,
            min,
            max,
        });
        start = end;
    }
    Level { idx, runs }
}

/// Ground distance (m) between two fixes (haversine).
pub fn distance_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * 6_371_008.8 * a.sqrt().asin()
}

/// The built-in colourings' values.
fn values_of(t: &Track, by: &ColourBy) -> Vec<f32> {
    let n = t.len();
    match by {
        ColourBy::Topic | ColourBy::Expression(_) => vec![f32::NAN; n],
        ColourBy::Altitude => t.alt.iter().map(|&a| a as f32).collect(),
        ColourBy::Accuracy => (0..n).map(|i| t.accuracy(i) as f32).collect(),
        ColourBy::Status => t
            .status
            .iter()
            .map(|&s| if s == i8::MIN { f32::NAN } else { f32::from(s) })
            .collect(),
        ColourBy::Speed => {
            // Over at least SPEED_WINDOW: receivers repeat a fix at a higher rate than they
            // update it, and a step between two fixes received close together is no speed.
            let mut out = vec![f32::NAN; n];
            let mut j = 0;
            for (i, slot) in out.iter_mut().enumerate() {
                while j + 1 < i && t.time_ns[i] - t.time_ns[j + 1] >= SPEED_WINDOW_NS {
                    j += 1;
                }
                let dt = t.time_ns[i].saturating_sub(t.time_ns[j]);
                if dt >= SPEED_WINDOW_NS {
                    let d = distance_m(t.lat[j], t.lon[j], t.lat[i], t.lon[i]);
                    *slot = (d / (dt as f64 * 1e-9)) as f32;
                }
            }
            // The first fixes take the first speed known.
            if let Some(first) = out.iter().copied().find(|v| v.is_finite()) {
                for v in out.iter_mut().take_while(|v| v.is_nan()) {
                    *v = first;
                }
            }
            out
        }
    }
}

/// The range of the finite values (robust: the 1st to 99th percentile, so one wild value does
/// not wash out the rest).
pub fn range_of(v: &[f32]) -> Option<(f32, f32)> {
    let mut f: Vec<f32> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if f.is_empty() {
        return None;
    }
    f.sort_unstable_by(f32::total_cmp);
    let at = |q: f64| f[((f.len() - 1) as f64 * q).round() as usize];
    let (lo, hi) = (at(0.01), at(0.99));
    Some(if hi > lo { (lo, hi) } else { (lo, lo + 1.0) })
}

impl Prepared {
    /// Prepares `track`, coloured by `by` (an expression's values are given in `expr_values`).
    pub fn new(track: Track, by: &ColourBy, expr_values: Result<Vec<f32>, String>) -> Prepared {
        let world: Vec<[f64; 2]> = track
            .lat
            .iter()
            .zip(&track.lon)
            .map(|(&la, &lo)| mercator::world(la, lo))
            .collect();
        let mut levels = Vec::with_capacity(LEVELS);
        for z in 0..LEVELS {
            levels.push(level(&world, z));
        }
        let (values, colour_error) = match by {
            ColourBy::Expression(_) => match expr_values {
                Ok(v) => (v, None),
                Err(e) => (vec![f32::NAN; track.len()], Some(e)),
            },
            other => (values_of(&track, other), None),
        };
        let range = range_of(&values);
        Prepared {
            track,
            world,
            levels,
            values,
            range,
            colour_error,
        }
    }

    /// The level to draw at a fractional zoom.
    pub fn level_for(&self, zoom: f64) -> &Level {
        let z = (zoom.ceil().max(0.0) as usize).min(LEVELS - 1);
        &self.levels[z]
    }
}

/// Values of an expression's series matched to each time of `times` by the nearest sample
/// (PlotJuggler's rule for additional sources; none within reach is NaN).
pub fn nearest(times: &[u64], series: &[(u64, f64)]) -> Vec<f32> {
    if series.is_empty() {
        return vec![f32::NAN; times.len()];
    }
    times
        .iter()
        .map(|&t| {
            let i = series.partition_point(|s| s.0 < t);
            let best = [i.checked_sub(1), (i < series.len()).then_some(i)]
                .into_iter()
                .flatten()
                .min_by_key(|&j| series[j].0.abs_diff(t));
            best.map_or(f32::NAN, |j| series[j].1 as f32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(n: usize) -> Track {
        let mut t = Track::default();
        for i in 0..n {
            t.time_ns.push(i as u64 * 100_000_000);
            t.lat.push(48.0 + i as f64 * 1e-5);
            t.lon.push(11.0);
            t.alt.push(500.0);
            t.cov.push([f32::NAN; 3]);
            t.status.push(0);
        }
        t
    }

    #[test]
    fn levels_thin_the_track_and_keep_its_ends() {
        let p = Prepared::new(track(10_000), &ColourBy::Speed, Ok(Vec::new()));
        let (low, high) = (&p.levels[2], &p.levels[LEVELS - 1]);
        assert!(low.idx.len() <= 3, "{}", low.idx.len());
        assert_eq!(high.idx.len(), 10_000);
        assert_eq!(*low.idx.last().unwrap(), 9_999);
        assert!(high.runs.windows(2).all(|w| w[0].end == w[1].start + 1));
        // 1.11 m every 0.1 s.
        let v = p.values[50];
        assert!((v - 11.12).abs() < 0.05, "{v}");
    }

    #[test]
    fn nearest_sample() {
        let s = [(10, 1.0), (20, 2.0), (40, 4.0)];
        assert_eq!(
            nearest(&[0, 14, 16, 31, 100], &s),
            vec![1.0, 1.0, 2.0, 4.0, 4.0]
        );
        assert!(nearest(&[5], &[])[0].is_nan());
    }
}
