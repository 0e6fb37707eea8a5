//! A dataset made on a cluster: each worker makes one recording's episodes into a part (a
//! directory of its own: `part.json` and the cameras' MP4s), and the driver assembles the
//! parts, in the recordings' order, into the dataset, as [`super::export`] writes it from the
//! same episodes made in one process (the Python package's `bagscope.dask.lerobot`).
//!
//! `part.json` keeps what [`super::assemble`] takes of an episode: its clock's start, ticks,
//! rows (each value as its IEEE 754 bits, so that nothing is rounded on the way), the counts of
//! ticks dropped and filled, and per camera its MP4 (a file of the part), time 0, format and
//! image statistics. A recording that fails is a part with no episode and the reason, left
//! out of the dataset and said, as in one process.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use bagscope_reader::error::Result;

use super::frames::Aligned;
use super::stats::Stats;
use super::{make, named, open_checked, write, Exported, Made, Mapping, Open};
use super::{write_dataset, VideoFormat};

const PART: &str = "part.json";

/// Opens every recording (by `open`, `None`: as it is) and checks `m` against it, reading no
/// message: a mistake in the mapping is said, with its line, before any work is handed out.
pub fn check(
    recordings: &[PathBuf],
    mapping: (&Mapping, &str),
    open: Option<&Open<'_>>,
) -> Result<()> {
    open_checked(recordings, mapping, open).map(|_| ())
}

/// Makes the episodes of `recording` into the part directory `dir` (made; anything in it
/// before is replaced), on `threads` threads. A recording that does not open, does not fit
/// the mapping or whose episode fails is said in the part (left out), not returned as an
/// error: the dataset is assembled without it. The episodes made come back.
pub fn make_part(
    recording: &Path,
    mapping: (&Mapping, &str),
    open: Option<&Open<'_>>,
    dir: &Path,
    threads: usize,
) -> Result<usize> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let (m, _) = mapping;
    let mut episodes = Vec::new();
    let mut left_out = Vec::new();
    match open_checked(&[recording.to_path_buf()], mapping, open) {
        Err(e) => left_out.push(format!("{}: {e}", recording.display())),
        Ok(work) => {
            for (i, bag, r) in &work {
                match make(bag, m, *r, dir, &format!("ep{i}"), threads) {
                    Ok(x) => episodes.push(episode_json(&x, dir)),
                    Err(e) => left_out.push(named(bag, *r, e)),
                }
            }
        }
    }
    let made = episodes.len();
    write::json(
        &dir.join(PART),
        &json!({
            "recording": recording.display().to_string(),
            "episodes": episodes,
            "left_out": left_out,
        }),
    )?;
    Ok(made)
}

/// The parts `dirs` (made by [`make_part`] with the same mapping), in order, written as the
/// dataset at `out`; their MP4s are moved into it. A part that is missing or unreadable is
/// left out and said.
pub fn assemble_parts(dirs: &[PathBuf], m: &Mapping, out: &Path) -> Result<Exported> {
    let mut results = Vec::new();
    for dir in dirs {
        match read_part(dir, m) {
            Ok(eps) => results.extend(eps),
            Err(e) => results.push(Err(format!("{}: {e}", dir.display()))),
        }
    }
    std::fs::create_dir_all(out)?;
    write_dataset(results, m, out)
}

fn bits(v: &[f64]) -> Value {
    Value::from(v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>())
}

fn stats_json(s: &Stats) -> Value {
    json!({
        "min": bits(&s.min), "max": bits(&s.max), "mean": bits(&s.mean), "std": bits(&s.std),
        "count": s.count,
        "quantiles": s.quantiles.iter().map(|q| bits(q)).collect::<Vec<_>>(),
    })
}

fn episode_json(x: &Made, dir: &Path) -> Value {
    let videos: Vec<Value> = x
        .videos
        .iter()
        .map(|(path, first_ns, f, st)| {
            json!({
                "file": path.strip_prefix(dir).unwrap_or(path).display().to_string(),
                "first_ns": first_ns,
                "width": f.size.0, "height": f.size.1,
                "codec": f.codec, "pix_fmt": f.pix_fmt,
                "depth": f.depth.map(|(a, b)| [a, b]),
                "stats": stats_json(st),
            })
        })
        .collect();
    json!({
        "t0": x.t0,
        "times": x.aligned.times,
        "rows": x.aligned.rows.iter().map(|r| bits(r)).collect::<Vec<_>>(),
        "dropped": x.aligned.dropped,
        "filled": x.aligned.filled,
        "videos": videos,
    })
}

/// A part's episodes (each made, or why not), checked against the mapping's shape.
fn read_part(
    dir: &Path,
    m: &Mapping,
) -> std::result::Result<Vec<std::result::Result<Made, String>>, String> {
    let path = dir.join(PART);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("no part ({e})"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{PART}: {e}"))?;
    let mut out = Vec::new();
    for why in v["left_out"].as_array().into_iter().flatten() {
        out.push(Err(why.as_str().unwrap_or("left out").to_string()));
    }
    let width = m.state.len() + m.action.len();
    for (k, e) in v["episodes"].as_array().into_iter().flatten().enumerate() {
        let bad = |what: &str| format!("{PART}: episode {k}: {what}");
        let made = episode(e, dir, width, m.cameras.len()).map_err(|w| bad(&w))?;
        out.push(Ok(made));
    }
    Ok(out)
}

fn u64s(v: &Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(Value::as_u64).collect()
}

fn f64s(v: &Value) -> Option<Vec<f64>> {
    Some(u64s(v)?.into_iter().map(f64::from_bits).collect())
}

fn stats(v: &Value) -> Option<Stats> {
    Some(Stats {
        min: f64s(&v["min"])?,
        max: f64s(&v["max"])?,
        mean: f64s(&v["mean"])?,
        std: f64s(&v["std"])?,
        count: v["count"].as_u64()?,
        quantiles: v["quantiles"]
            .as_array()?
            .iter()
            .map(f64s)
            .collect::<Option<_>>()?,
    })
}

/// The `&'static` names `info.json` takes.
fn known(word: Option<&str>, words: &[&'static str]) -> Option<&'static str> {
    let w = word?;
    words.iter().copied().find(|x| *x == w)
}

fn episode(
    e: &Value,
    dir: &Path,
    width: usize,
    cameras: usize,
) -> std::result::Result<Made, String> {
    let times = u64s(&e["times"]).ok_or("times")?;
    let rows: Vec<Vec<f64>> = e["rows"]
        .as_array()
        .ok_or("rows")?
        .iter()
        .map(f64s)
        .collect::<Option<_>>()
        .ok_or("rows")?;
    if rows.len() != times.len() || rows.iter().any(|r| r.len() != width) || times.is_empty() {
        return Err(format!(
            "{} rows of {} ticks, not of the mapping's {width} values",
            rows.len(),
            times.len()
        ));
    }
    let mut videos = Vec::new();
    for c in e["videos"].as_array().ok_or("videos")? {
        let file = c["file"].as_str().ok_or("a video's file")?;
        // A file of the part, nothing outside it.
        if Path::new(file).components().count() != 1 {
            return Err(format!("a video file outside the part: {file:?}"));
        }
        let dim = |k: &str| {
            c[k].as_u64()
                .map(|x| x as usize)
                .ok_or(format!("a video's {k}"))
        };
        let format = VideoFormat {
            size: (dim("width")?, dim("height")?),
            codec: known(c["codec"].as_str(), &["h264", "hevc", "av1"]).ok_or("a video's codec")?,
            pix_fmt: known(c["pix_fmt"].as_str(), &["yuv420p", "yuv420p10le"])
                .ok_or("a video's pix_fmt")?,
            depth: match &c["depth"] {
                Value::Null => None,
                d => Some((
                    d[0].as_f64().ok_or("a video's depth")?,
                    d[1].as_f64().ok_or("a video's depth")?,
                )),
            },
        };
        videos.push((
            dir.join(file),
            c["first_ns"].as_u64().ok_or("a video's first_ns")?,
            format,
            stats(&c["stats"]).ok_or("a video's stats")?,
        ));
    }
    if videos.len() != cameras {
        return Err(format!(
            "{} videos, not the mapping's {cameras} cameras",
            videos.len()
        ));
    }
    Ok(Made {
        aligned: Aligned {
            times,
            rows,
            camera_frames: Vec::new(),
            dropped: e["dropped"].as_u64().ok_or("dropped")?,
            filled: e["filled"].as_u64().ok_or("filled")?,
        },
        t0: e["t0"].as_u64().ok_or("t0")?,
        videos,
    })
}
