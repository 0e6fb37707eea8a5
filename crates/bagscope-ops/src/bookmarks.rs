//! Bookmarks kept in the recording (a time or a range, a label, a colour) written into
//! an MCAP file as metadata records named [`METADATA_NAME`], or into a sidecar JSON beside a
//! ROS 1 bag or rosbag2 recording ([`sidecar_path`]); read back when the recording is opened;
//! carried by `export`.
//!
//! Writing never writes over the source's bytes: an MCAP is written whole to a new file beside
//! it (messages byte for byte, its other metadata records kept) that is then renamed over it;
//! a sidecar is written to a temporary name and renamed.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use bagscope_reader::storage::Version;
use bagscope_reader::{Bag, Error, Result};

/// The name of a bookmark's metadata record in an MCAP file.
pub const METADATA_NAME: &str = "bagscope.bookmark";

/// A bookmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bookmark {
    /// Its time, or its range's start (ns since the epoch).
    pub start_ns: u64,
    /// Its range's end, for a range.
    pub end_ns: Option<u64>,
    /// What it says.
    pub label: String,
    /// `#rrggbb`, or empty.
    pub color: String,
}

impl Bookmark {
    /// As an MCAP metadata record's key/value pairs.
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("start_ns".to_string(), self.start_ns.to_string()),
            ("label".to_string(), self.label.clone()),
        ];
        if let Some(e) = self.end_ns {
            v.push(("end_ns".into(), e.to_string()));
        }
        if !self.color.is_empty() {
            v.push(("color".into(), self.color.clone()));
        }
        v
    }

    /// As a sidecar holds it.
    fn to_json(&self) -> Value {
        let mut v = json!({"start_ns": self.start_ns, "label": self.label});
        if let Some(e) = self.end_ns {
            v["end_ns"] = json!(e);
        }
        if !self.color.is_empty() {
            v["color"] = json!(self.color);
        }
        v
    }

    /// From a sidecar's entry (`None` without a start).
    fn from_json(v: &Value) -> Option<Bookmark> {
        Some(Bookmark {
            start_ns: v.get("start_ns")?.as_u64()?,
            end_ns: v.get("end_ns").and_then(Value::as_u64),
            label: v
                .get("label")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            color: v
                .get("color")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    }

    /// From an MCAP metadata record's pairs (`None` without a start).
    pub fn from_pairs(pairs: &[(String, String)]) -> Option<Bookmark> {
        let get = |k: &str| pairs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
        Some(Bookmark {
            start_ns: get("start_ns")?.parse().ok()?,
            end_ns: get("end_ns").and_then(|e| e.parse().ok()),
            label: get("label").unwrap_or("").to_string(),
            color: get("color").unwrap_or("").to_string(),
        })
    }
}

/// The sidecar of a recording: `run.bag.bookmarks.json` beside `run.bag`, `run.bookmarks.json`
/// beside a rosbag2 directory `run/` (or its `metadata.yaml`).
pub fn sidecar_path(recording: &Path) -> PathBuf {
    let base = if recording.file_name().is_some_and(|n| n == "metadata.yaml") {
        recording.parent().unwrap_or(recording)
    } else {
        recording
    };
    let name = base
        .file_name()
        .map_or_else(|| "recording".into(), |n| n.to_string_lossy().into_owned());
    base.with_file_name(format!("{name}.bookmarks.json"))
}

/// Whether notes of `bag` go into the file itself (a single MCAP file).
pub fn in_file(bag: &Bag) -> bool {
    let s = bag.summary();
    s.version == Version::Mcap && s.path.is_file()
}

/// The notes of `bag`: its MCAP metadata records, then its sidecar's, in time order. A sidecar
/// that does not read is reported, not fatal.
pub fn read_bookmarks(bag: &Bag) -> (Vec<Bookmark>, Option<String>) {
    let s = bag.summary();
    let mut notes: Vec<Bookmark> = s
        .metadata
        .iter()
        .filter(|(n, _)| n == METADATA_NAME)
        .filter_map(|(_, kv)| Bookmark::from_pairs(kv))
        .collect();
    let side = sidecar_path(&s.path);
    let mut problem = None;
    if side.is_file() {
        let r = std::fs::read(&side)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
            .and_then(|v| {
                v.get("bookmarks")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Bookmark::from_json).collect::<Vec<_>>())
                    .ok_or_else(|| "no \"bookmarks\" list".to_string())
            });
        match r {
            Ok(list) => notes.extend(list),
            Err(e) => problem = Some(format!("{}: {e}", side.display())),
        }
    }
    notes.sort_by_key(|n| n.start_ns);
    notes.dedup();
    (notes, problem)
}

/// Writes `notes` as the sidecar of the recording at `recording`.
pub fn write_sidecar(recording: &Path, notes: &[Bookmark]) -> Result<PathBuf> {
    let side = sidecar_path(recording);
    let doc = json!({
        "bagscope_bookmarks": 1,
        "bookmarks": notes.iter().map(Bookmark::to_json).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_vec_pretty(&doc).map_err(|e| Error::Invalid(e.to_string()))?;
    text.push(b'\n');
    bagscope_reader::storage::write_atomically(&side, &text)
        .map_err(|e| Error::Invalid(format!("{}: {e}", side.display())))?;
    Ok(side)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_round_trip() {
        let n = Bookmark {
            start_ns: 17,
            end_ns: Some(99),
            label: "dock ∆ \"left\"".into(),
            color: "#ff8800".into(),
        };
        assert_eq!(Bookmark::from_pairs(&n.to_pairs()), Some(n));
        assert_eq!(Bookmark::from_pairs(&[("label".into(), "x".into())]), None);
    }

    #[test]
    fn sidecars_sit_beside_the_recording() {
        assert_eq!(
            sidecar_path(Path::new("/d/run.bag")),
            Path::new("/d/run.bag.bookmarks.json")
        );
        assert_eq!(
            sidecar_path(Path::new("/d/run")),
            Path::new("/d/run.bookmarks.json")
        );
        assert_eq!(
            sidecar_path(Path::new("/d/run/metadata.yaml")),
            Path::new("/d/run.bookmarks.json")
        );
    }
}
