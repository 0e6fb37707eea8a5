//! A topic's GPS track: every fix of a `sensor_msgs/NavSatFix`, `gps_common/GPSFix` or
//! `foxglove.LocationFix` topic (or two numeric paths of any topic), read in one pass over the
//! recording's chunks, with what was left out and why.

use std::sync::atomic::AtomicBool;

use bagscope_reader::encoding::{path_topic, FieldPath, Value};
use bagscope_reader::{Bag, Summary};

use super::fast::Row;
use super::GeoError;
use crate::Result;

/// What a topic's messages are, for the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FixKind {
    /// `sensor_msgs/NavSatFix` (ROS 1 and 2).
    NavSatFix,
    /// `gps_common/GPSFix`.
    GpsFix,
    /// `foxglove.LocationFix` (protobuf, JSON, FlatBuffers-free encodings bagscope decodes) or
    /// `foxglove_msgs/LocationFix`.
    LocationFix,
    /// `foxglove.GeoJSON` or `foxglove_msgs/GeoJSON`: shapes, not a track.
    GeoJson,
}

impl FixKind {
    /// The kind of a message type, if the map draws it.
    pub fn of(datatype: &str) -> Option<FixKind> {
        let t = datatype.replace("/msg/", "/");
        Some(match t.as_str() {
            "sensor_msgs/NavSatFix" => FixKind::NavSatFix,
            "gps_common/GPSFix" => FixKind::GpsFix,
            "foxglove.LocationFix" | "foxglove_msgs/LocationFix" => FixKind::LocationFix,
            "foxglove.GeoJSON" | "foxglove_msgs/GeoJSON" => FixKind::GeoJson,
            _ => return None,
        })
    }
}

/// The topics of a recording the map can draw, with their kinds.
pub fn map_topics(s: &Summary) -> Vec<(String, FixKind)> {
    s.topics
        .iter()
        .filter_map(|t| FixKind::of(&t.datatype).map(|k| (t.name.clone(), k)))
        .collect()
}

/// Where a track comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackSource {
    /// A fix topic (its kind from its type).
    Topic(String),
    /// Latitude and longitude (degrees) at two numeric paths of one topic's messages, for
    /// messages of other shapes: `/odom_gps.lat`, `/odom_gps.lon`.
    Paths {
        /// The latitude's path.
        lat: String,
        /// The longitude's path.
        lon: String,
    },
}

impl TrackSource {
    /// How it is named: the topic, or `lat, lon`.
    pub fn name(&self) -> String {
        match self {
            TrackSource::Topic(t) => t.clone(),
            TrackSource::Paths { lat, lon } => format!("{lat}, {lon}"),
        }
    }
}

/// A fix the track left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The message's receive time (ns).
    pub time_ns: u64,
    /// The message's number on its topic (0 first).
    pub index: usize,
    /// Why: `latitude 91.2 out of range`, `NaN longitude`, `at 0°, 0°`.
    pub why: String,
}

/// Most left-out fixes listed one by one (all are counted).
pub const SKIPPED_LISTED: usize = 50;

/// A track: parallel columns, one row a fix, in time order.
#[derive(Debug, Clone, Default)]
pub struct Track {
    /// Where it comes from.
    pub name: String,
    /// Receive times (ns).
    pub time_ns: Vec<u64>,
    /// Latitudes (degrees).
    pub lat: Vec<f64>,
    /// Longitudes (degrees).
    pub lon: Vec<f64>,
    /// Altitudes (metres; NaN where none is given).
    pub alt: Vec<f64>,
    /// The horizontal covariance (m²): east variance, north variance, east-north covariance;
    /// NaN where the message says it is unknown.
    pub cov: Vec<[f32; 3]>,
    /// The fix status as the message gives it (NavSatFix/GPSFix: 0 fix, 1 SBAS, 2 GBAS);
    /// `i8::MIN` where the type has none.
    pub status: Vec<i8>,
    /// Messages whose status says there is no fix (left out).
    pub no_fix: usize,
    /// Fixes left out as not a position (NaN, out of range, 0°, 0°): how many.
    pub bad: usize,
    /// The first [`SKIPPED_LISTED`] of them, with why.
    pub skipped: Vec<Skipped>,
    /// Messages received before the one before them, put in time order.
    pub reordered: usize,
}

impl Track {
    /// Fixes in the track.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// No fix at all.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// The index of the last fix at or before `t`, or the first one.
    pub fn at(&self, t: u64) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        Some(self.time_ns.partition_point(|&x| x <= t).saturating_sub(1))
    }

    /// The accuracy (m) of fix `i`: the square root of the larger horizontal variance, NaN
    /// where unknown.
    pub fn accuracy(&self, i: usize) -> f64 {
        self.cov
            .get(i)
            .map_or(f64::NAN, |c| f64::from(c[0].max(c[1])).sqrt())
    }

    /// `[south, west, north, east]` of the fixes.
    pub fn bounds(&self) -> Option<[f64; 4]> {
        if self.is_empty() {
            return None;
        }
        let mut b = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
        for (la, lo) in self.lat.iter().zip(&self.lon) {
            b = [b[0].min(*la), b[1].min(*lo), b[2].max(*la), b[3].max(*lo)];
        }
        Some(b)
    }

    /// What was left out, in a sentence (empty when nothing was).
    pub fn summary_of_skipped(&self) -> String {
        let mut parts = Vec::new();
        if self.no_fix > 0 {
            parts.push(format!("{} without a fix (status NO_FIX)", self.no_fix));
        }
        if self.bad > 0 {
            let first = self.skipped.first().map_or(String::new(), |s| {
                format!(
                    ", the first at {} (message {}): {}",
                    crate::timefmt::date(s.time_ns),
                    s.index,
                    s.why
                )
            });
            parts.push(format!("{} not a position{first}", self.bad));
        }
        if self.reordered > 0 {
            parts.push(format!(
                "{} received out of time order (put in order)",
                self.reordered
            ));
        }
        parts.join("; ")
    }
}

/// The fields a kind's fixes are read from: latitude, longitude, altitude, status, then the
/// covariance's (the ones after the first two read where the messages have them: an old
/// `gps_common/GPSFix` has no status, a `LocationFix` none).
const FIELDS: [&str; 8] = [
    "latitude",
    "longitude",
    "altitude",
    "status.status",
    "position_covariance[0]",
    "position_covariance[4]",
    "position_covariance[1]",
    "position_covariance_type",
];

/// Reads the track of `source` within `[start_ns, end_ns)` on `threads` threads; `cancel`
/// stops it early (with the fixes so far).
pub fn read_track(
    bag: &Bag,
    source: &TrackSource,
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Track> {
    let err = |reason: String| GeoError {
        what: source.name(),
        reason,
    };
    let paths: Vec<String> = match source {
        TrackSource::Topic(topic) => {
            let t = bag
                .summary()
                .topic(topic)
                .ok_or_else(|| err("no such topic in the recording".into()))?;
            let kind = FixKind::of(&t.datatype).ok_or_else(|| {
                err(format!(
                    "{} is not a fix type (sensor_msgs/NavSatFix, gps_common/GPSFix, \
                     foxglove.LocationFix); give latitude and longitude paths",
                    t.datatype
                ))
            })?;
            if kind == FixKind::GeoJson {
                return Err(err("a GeoJSON topic holds shapes, not a track".into()).into());
            }
            if kind == FixKind::NavSatFix {
                let range = (start_ns, end_ns);
                if let Some(rows) = super::fast::navsatfix_rows(bag, topic, range, cancel) {
                    return Ok(track_of(source.name(), rows));
                }
            }
            FIELDS
                .iter()
                .map(|f| format!("{}.{f}", path_topic(topic)))
                .collect()
        }
        TrackSource::Paths { lat, lon } => vec![lat.clone(), lon.clone()],
    };
    let mut parsed = Vec::with_capacity(paths.len());
    for p in &paths {
        parsed.push(FieldPath::parse(p)?);
    }
    if let TrackSource::Paths { .. } = source {
        if parsed[0].topic != parsed[1].topic || parsed[0].topic.is_empty() {
            return Err(err("latitude and longitude are paths of one topic".into()).into());
        }
    }
    // Which fields every connection has (latitude and longitude must be there: their
    // absence is the error the read gives).
    let has = |i: usize| {
        i < 2
            || bagscope_reader::series::compile(bag, &parsed[i])
                .is_ok_and(|(_, problems)| problems.is_empty())
    };
    let present: Vec<usize> = (0..parsed.len()).filter(|&i| has(i)).collect();
    let read: Vec<FieldPath> = present.iter().map(|&i| parsed[i].clone()).collect();
    let series =
        bagscope_reader::series::field_series_many(bag, &read, start_ns, end_ns, threads, cancel)?;
    // The series of field `f` (an index into FIELDS), if read.
    let col = |f: usize| present.iter().position(|&i| i == f).map(|k| &series[k]);
    let n = series[0].points.len();
    if let Some(short) = series.iter().find(|s| s.points.len() != n) {
        let problem = short.problems.first().cloned().unwrap_or_default();
        return Err(err(format!(
            "the fields are missing in {} messages {problem}",
            short.missing
        ))
        .into());
    }
    let num = |f: usize, i: usize| -> f64 {
        col(f)
            .and_then(|x| x.points.get(i))
            .and_then(|p| p.value.as_f64())
            .unwrap_or(f64::NAN)
    };
    let status_col = col(3);
    let has_cov = (4..8).all(|f| col(f).is_some());
    let rows: Vec<Row> = (0..n)
        .map(|i| {
            let status = match status_col.and_then(|c| c.points.get(i)).map(|p| &p.value) {
                Some(Value::I8(s)) => *s,
                Some(v) => v.as_f64().map_or(0, |x| x.clamp(-127.0, 127.0) as i8),
                None => i8::MIN,
            };
            let cov = if has_cov {
                [num(4, i), num(5, i), num(6, i)]
            } else {
                [f64::NAN; 3]
            };
            let kind = if has_cov {
                num(7, i).clamp(0.0, 255.0) as u8
            } else {
                0
            };
            let time = series[0].points[i].time_ns;
            (time, status, num(0, i), num(1, i), num(2, i), cov, kind)
        })
        .collect();
    Ok(track_of(source.name(), rows))
}

/// A track of the rows of a fix topic's messages (in any order): put in time order, the
/// no-fix and not-a-position ones left out and counted.
fn track_of(name: String, mut rows: Vec<Row>) -> Track {
    let reordered = rows.windows(2).filter(|w| w[1].0 < w[0].0).count();
    if reordered > 0 {
        rows.sort_by_key(|r| r.0);
    }
    let mut t = Track {
        name,
        reordered,
        ..Track::default()
    };
    for (index, &(time, status, lat, lon, alt, cov, kind)) in rows.iter().enumerate() {
        if status != i8::MIN && status < 0 {
            t.no_fix += 1;
            continue;
        }
        let why = if lat.is_nan() || lon.is_nan() {
            Some(format!("NaN position ({lat}, {lon})"))
        } else if !(-90.0..=90.0).contains(&lat) {
            Some(format!("latitude {lat} out of range"))
        } else if !(-180.0..=180.0).contains(&lon) {
            Some(format!("longitude {lon} out of range"))
        } else if lat == 0.0 && lon == 0.0 {
            Some("at 0°, 0°: a receiver with no position".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            t.bad += 1;
            if t.skipped.len() < SKIPPED_LISTED {
                t.skipped.push(Skipped {
                    time_ns: time,
                    index,
                    why,
                });
            }
            continue;
        }
        t.time_ns.push(time);
        t.lat.push(lat);
        t.lon.push(lon);
        t.alt.push(alt);
        t.status.push(status);
        t.cov.push(if kind > 0 {
            cov.map(|v| v as f32)
        } else {
            [f32::NAN; 3]
        });
    }
    t
}
