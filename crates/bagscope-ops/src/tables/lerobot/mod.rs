//! Recordings into a LeRobot dataset (format v3.0, `codebase_version` `"v3.0"`), as
//! `bagscope export REC… --format lerobot --mapping map.yaml -o DIR` writes it:
//!
//! - `data/chunk-000/file-NNN.parquet`: an episode a file, its frames' `observation.state` and
//!   `action` (float32 vectors of the mapping's expressions), `timestamp`, `frame_index`,
//!   `episode_index`, `index`, `task_index`;
//! - `videos/observation.images.NAME/chunk-000/file-NNN.mp4`: an episode a file, its camera's
//!   H.264/H.265 packets copied (not re-encoded) with the frames on the clock shown exactly at
//!   their frame's time;
//! - `meta/info.json`, `meta/stats.json` (as LeRobot computes them), `meta/tasks.parquet`,
//!   `meta/episodes/chunk-000/file-000.parquet` (each episode's rows, video spans and stats).
//!
//! Every recording is opened and the mapping checked against it before any is read; episodes
//! are made on `threads` threads; one that fails is left out (and said) and the dataset written
//! without it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arrow_array::RecordBatch;
use serde_json::{json, Map, Value};

use bagscope_reader::bag::Bag;
use bagscope_reader::error::{Error, Result};
use bagscope_reader::series::{expr_series, Env};

use crate::media::video::mp4::write_mp4_timed;
use crate::media::video::VideoIndex;

mod frames;
mod images;
mod mapping;
mod parts;
mod stats;
mod write;

pub use frames::{align, nearest_index, ticks, Aligned, Stream};
pub use mapping::{Align, Camera, Component, Episodes, Mapping, Missing};
pub use parts::{assemble_parts, check, make_part};
pub use stats::{aggregate, of_columns, of_rows, Stats, QUANTILES};

/// What an export came to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exported {
    /// Episodes written.
    pub episodes: usize,
    /// Frames written.
    pub frames: u64,
    /// Clock ticks left out for a missing value, over all episodes.
    pub dropped: u64,
    /// Frames with a value filled.
    pub filled: u64,
    /// Episodes left out: the recording, its range and why.
    pub left_out: Vec<String>,
}

/// An episode made, before its place in the dataset is known.
struct Made {
    aligned: Aligned,
    /// The tick the episode's clock starts at (ns).
    t0: u64,
    /// Per camera: the MP4 written (a temporary path), its time 0 (ns), its size, and the
    /// image statistics of its sampled frames.
    videos: Vec<(PathBuf, u64, VideoFormat, Stats)>,
}

/// The episodes of `bag`: its whole span, each range bookmark kept in it, or the mapping's
/// ranges (from its start, cut at its end; one that starts after the end is an error).
fn episode_ranges(bag: &Bag, how: &Episodes) -> Result<Vec<(u64, u64)>> {
    let s = bag.summary();
    let (a, b) = (s.start_ns.unwrap_or(0), s.end_ns.unwrap_or(0));
    match how {
        Episodes::Recording => Ok(vec![(a, b)]),
        Episodes::Bookmarks => {
            let (notes, _) = crate::bookmarks::read_bookmarks(bag);
            let r: Vec<(u64, u64)> = notes
                .iter()
                .filter_map(|n| n.end_ns.map(|e| (n.start_ns, e)))
                .collect();
            if r.is_empty() {
                return Err(Error::Invalid(format!(
                    "{}: episodes: bookmarks, but the recording keeps no range bookmark",
                    s.path.display()
                )));
            }
            Ok(r)
        }
        Episodes::Ranges(r) => r
            .iter()
            .map(|&(from, to)| {
                let at = |x: f64| a.saturating_add((x * 1e9).round() as u64);
                if at(from) > b {
                    return Err(Error::Invalid(format!(
                        "{}: episodes: [{from}, {to}] starts after the recording's end ({:.3} s)",
                        s.path.display(),
                        (b - a) as f64 / 1e9
                    )));
                }
                Ok((at(from), at(to).min(b)))
            })
            .collect(),
    }
}

/// LeRobot's `sample_indices(n)` (for an image feature's statistics).
fn sample_indices(n: usize) -> Vec<usize> {
    let min = 100usize.min(n);
    let k = min.max(((n as f64).powf(0.75) as usize).min(10_000));
    if k == 0 {
        return Vec::new();
    }
    if k == 1 {
        return vec![0];
    }
    (0..k)
        .map(|i| {
            let x = i as f64 * (n - 1) as f64 / (k - 1) as f64;
            // numpy rounds half to even.
            let r = x.round();
            let r = if (x - x.trunc() - 0.5).abs() < 1e-12 && r as usize % 2 == 1 {
                r - 1.0
            } else {
                r
            };
            r as usize
        })
        .collect()
}

/// A picture's pixels as LeRobot's image statistics take them: RGB, downsampled by an integer
/// stride to about 150 px where it is 300 px or more.
/// What `info.json` says of a camera's video: its size, codec and pixel format as PyAV names
/// them (LeRobot reads them so).
#[derive(Debug, Clone, Copy, Default)]
struct VideoFormat {
    size: (usize, usize),
    codec: &'static str,
    pix_fmt: &'static str,
    /// A depth camera's range (m): grey from near (black) to far (white).
    depth: Option<(f64, f64)>,
}

fn pixels(rgba: &[u8], (w, h): (usize, usize), cols: &mut [Vec<f64>; 3]) {
    let stride = if w.max(h) < 300 {
        1
    } else if w > h {
        w / 150
    } else {
        h / 150
    }
    .max(1);
    for y in (0..h).step_by(stride) {
        for x in (0..w).step_by(stride) {
            let i = (y * w + x) * 4;
            for (c, col) in cols.iter_mut().enumerate() {
                col.push(f64::from(rgba[i + c]));
            }
        }
    }
}

/// A camera's frames: a video topic's packets (copied) or an image topic's pictures
/// (encoded).
enum Frames {
    Video(Arc<VideoIndex>),
    Images(images::Images),
}

impl Frames {
    fn times(&self) -> Vec<u64> {
        match self {
            Frames::Video(ix) => ix
                .frames
                .iter()
                .map(|&p| ix.packets[p as usize].time_ns)
                .collect(),
            Frames::Images(im) => im.times.clone(),
        }
    }
}

/// An image feature's statistics as LeRobot's `compute_episode_stats` gives them from the
/// pixels of its sampled frames: per channel (uint8: their squares wrap as numpy's do),
/// divided by 255.
fn image_stats(cols: &[Vec<f64>; 3], sampled: usize) -> Stats {
    let mut s = of_columns(cols, sampled as u64, |x| {
        ((x as u32 * x as u32) % 256) as f64
    });
    for v in [&mut s.min, &mut s.max, &mut s.mean, &mut s.std]
        .into_iter()
        .chain(s.quantiles.iter_mut())
    {
        for x in v.iter_mut() {
            *x /= 255.0;
        }
    }
    s
}

/// `e` of the episode of `bag` over `[a, b]`, named by the recording and the range.
fn named(bag: &Bag, (a, b): (u64, u64), e: Error) -> String {
    let s = bag.summary();
    let at = |t: u64| t.saturating_sub(s.start_ns.unwrap_or(0)) as f64 / 1e9;
    format!("{} [{:.3} s, {:.3} s]: {e}", s.path.display(), at(a), at(b))
}

/// Makes one episode of `bag` over `[a, b]`: streams aligned, cameras' MP4s written under
/// `tmp` (named by `tag`).
fn make(
    bag: &Bag,
    m: &Mapping,
    (a, b): (u64, u64),
    tmp: &Path,
    tag: &str,
    threads: usize,
) -> Result<Made> {
    let cancel = AtomicBool::new(false);
    let exprs: Vec<_> = m.components().map(|c| c.expr.clone()).collect();
    let series = expr_series(
        bag,
        &exprs,
        &Env::default(),
        (Some(a), Some(b.saturating_add(1))),
        threads,
        &cancel,
    )?;
    let streams: Vec<Stream> = series
        .iter()
        .map(|s| Stream {
            times: s.points.iter().map(|p| p.time_ns).collect(),
            values: s
                .points
                .iter()
                .map(|p| p.value.as_f64().unwrap_or(f64::NAN))
                .collect(),
        })
        .collect();
    let mut indexes = Vec::new();
    for cam in &m.cameras {
        let datatype = bag
            .summary()
            .topic(&cam.topic)
            .map(|t| t.datatype.clone())
            .unwrap_or_default();
        let frames = match VideoIndex::build(bag, &cam.topic, Some(&cancel)) {
            Ok(ix) => Frames::Video(Arc::new(ix)),
            // JPEG, PNG and raw pictures: encoded.
            Err(_) if crate::media::image::is_camera_type(&datatype) => {
                Frames::Images(images::Images::list(bag, &cam.topic, (a, b))?)
            }
            // The index's error names the topic.
            Err(e) => return Err(Error::Invalid(e.to_string())),
        };
        indexes.push(frames);
    }
    let cam_times: Vec<Vec<u64>> = indexes.iter().map(Frames::times).collect();
    // The clock starts at the episode's start, or at the first camera's first frame in it.
    let t0 = match cam_times.first() {
        Some(c) => *c
            .iter()
            .find(|&&t| t >= a)
            .ok_or_else(|| Error::Invalid(format!("{} has no frame in it", m.cameras[0].topic)))?,
        None => a,
    };
    let clock = ticks(t0, b, m.fps);
    let aligned = align(
        &clock,
        &streams,
        &cam_times,
        (m.align, m.tolerance_ns, m.missing),
    );
    if aligned.times.is_empty() {
        return Err(Error::Invalid(format!(
            "no frame has every stream ({} ticks, all dropped)",
            clock.len()
        )));
    }
    let mut videos = Vec::new();
    for (k, frames) in indexes.iter().enumerate() {
        let picked = &aligned.camera_frames[k];
        let path = tmp.join(format!("{tag}-{k}.mp4"));
        let ix = match frames {
            Frames::Video(ix) => ix,
            Frames::Images(im) => {
                let sampled: std::collections::HashSet<usize> =
                    sample_indices(picked.len()).into_iter().collect();
                let mut cols: [Vec<f64>; 3] = Default::default();
                let mut see = |tick: usize, rgba: &[u8], w: usize, h: usize| {
                    if sampled.contains(&tick) {
                        pixels(rgba, (w, h), &mut cols);
                    }
                };
                let (w, depth) = im.encode(
                    bag,
                    (picked, &aligned.times),
                    m.fps,
                    threads,
                    m.depth_range,
                    &path,
                    &mut see,
                )?;
                let format = VideoFormat {
                    size: (w.width, w.height),
                    codec: "av1",
                    pix_fmt: "yuv420p",
                    depth: depth.then_some(m.depth_range),
                };
                videos.push((path, w.first_ns, format, image_stats(&cols, sampled.len())));
                continue;
            }
        };
        // Each frame on the clock shown exactly at its tick.
        let shown_at: HashMap<usize, u64> = picked
            .iter()
            .zip(&aligned.times)
            .map(|(&f, &t)| (f, t))
            .collect();
        if shown_at.len() != picked.len() {
            return Err(Error::Invalid(format!(
                "{} has fewer frames than the clock's {} fps: lower fps",
                ix.topic, m.fps
            )));
        }
        let first = cam_times[k][picked[0]];
        let last = cam_times[k][picked[picked.len() - 1]];
        // The statistics' sampled frames, taken as the packets are decoded for the MP4.
        let sampled: std::collections::HashSet<usize> = sample_indices(picked.len())
            .into_iter()
            .map(|i| picked[i])
            .collect();
        let mut cols: [Vec<f64>; 3] = Default::default();
        let mut depth = 8;
        let mut see = |f: usize, yuv: &crate::media::video::Yuv| {
            depth = yuv.bit_depth;
            if sampled.contains(&f) {
                pixels(&yuv.to_rgba(), (yuv.width, yuv.height), &mut cols);
            }
        };
        let w = write_mp4_timed(
            bag,
            ix,
            (Some(first), Some(last + 1)),
            &shown_at,
            &mut see,
            &path,
        )
        .map_err(|e| Error::Invalid(e.to_string()))?;
        let st = image_stats(&cols, sampled.len());
        use crate::media::video::Codec;
        let format = VideoFormat {
            size: (w.width, w.height),
            codec: match ix.codec {
                Codec::H264 => "h264",
                Codec::H265 => "hevc",
                Codec::Av1 => "av1",
            },
            pix_fmt: if depth > 8 { "yuv420p10le" } else { "yuv420p" },
            depth: None,
        };
        videos.push((path, w.first_ns, format, st));
    }
    Ok(Made {
        aligned,
        t0,
        videos,
    })
}

/// Opens a recording for the export (with the virtual topics of message scripts, say): the
/// recording, or why not.
pub type Open<'a> = dyn Fn(&Path) -> std::result::Result<Bag, String> + 'a;

/// Each recording opened by `open` (`None`: as it is) and `m` checked against it, no message
/// read: the episodes to make, in order (an index, the recording, its range).
type Work = Vec<(usize, Arc<Bag>, (u64, u64))>;

fn open_checked(
    recordings: &[PathBuf],
    (m, m_name): (&Mapping, &str),
    open: Option<&Open<'_>>,
) -> Result<Work> {
    let mut work: Work = Vec::new();
    for p in recordings {
        let bag = Arc::new(match open {
            Some(open) => open(p).map_err(Error::Invalid)?,
            None => Bag::open(p)?,
        });
        m.check(&bag)
            .map_err(|e| Error::Invalid(format!("in {}: {}", p.display(), e.at(m_name))))?;
        for r in episode_ranges(&bag, &m.episodes)? {
            work.push((work.len(), bag.clone(), r));
        }
    }
    Ok(work)
}

/// `recordings` into a LeRobot dataset at `out` by `m` (`m_name` names the mapping in errors),
/// each opened by `open` (`None`: as it is); `progress(done, total)` after each episode.
pub fn export(
    recordings: &[PathBuf],
    mapping: (&Mapping, &str),
    open: Option<&Open<'_>>,
    out: &Path,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Exported> {
    let m = mapping.0;
    // Every recording opened and checked first.
    let work = open_checked(recordings, mapping, open)?;
    std::fs::create_dir_all(out)?;
    let tmp = out.join(".bagscope-tmp");
    std::fs::create_dir_all(&tmp)?;
    let per = (threads / work.len().max(1)).max(1);
    let results = crate::tables::in_parallel(
        &work,
        threads,
        &|(i, bag, r)| {
            make(bag, m, *r, &tmp, &format!("ep{i}"), per).map_err(|e| named(bag, *r, e))
        },
        progress,
    )?;
    let written = write_dataset(results, m, out);
    let _ = std::fs::remove_dir_all(&tmp);
    written
}

/// The episodes made (or why not, each left out and said), in order, written as the dataset
/// at `out`.
fn write_dataset(
    results: Vec<std::result::Result<Made, String>>,
    m: &Mapping,
    out: &Path,
) -> Result<Exported> {
    let mut report = Exported::default();
    let mut made = Vec::new();
    for r in results {
        match r {
            Ok(x) => made.push(x),
            Err(e) => report.left_out.push(e),
        }
    }
    if made.is_empty() {
        return Err(Error::Invalid(format!(
            "no episode could be made: {}",
            report.left_out.join("; ")
        )));
    }
    assemble(&made, m, out, &mut report)?;
    Ok(report)
}

const STATE: &str = "observation.state";
const ACTION: &str = "action";

/// Writes the made episodes as the dataset: data, videos moved into place, metadata.
fn assemble(made: &[Made], m: &Mapping, out: &Path, report: &mut Exported) -> Result<()> {
    let (ns, na) = (m.state.len(), m.action.len());
    let fps = f64::from(m.fps);
    let mut ep_rows: Vec<Map<String, Value>> = Vec::new();
    let mut all_stats: Vec<HashMap<String, (Stats, bool)>> = Vec::new();
    let mut index = 0i64;
    let mut sizes: Vec<VideoFormat> = vec![VideoFormat::default(); m.cameras.len()];
    for (e, x) in made.iter().enumerate() {
        let n = x.aligned.times.len();
        let ts: Vec<f64> = x
            .aligned
            .times
            .iter()
            .map(|&t| (t - x.t0) as f64 / 1e9)
            .collect();
        // Timestamps as float32 (the column's type), the statistics of what is stored.
        let ts32: Vec<f64> = ts.iter().map(|&t| f64::from(t as f32)).collect();
        let state: Vec<Vec<f64>> = x.aligned.rows.iter().map(|r| r[..ns].to_vec()).collect();
        let action: Vec<Vec<f64>> = x.aligned.rows.iter().map(|r| r[ns..].to_vec()).collect();
        let (chunk, file) = (e / 1000, e % 1000);
        let batch = RecordBatch::try_from_iter(vec![
            (STATE, write::vectors(&state, ns)),
            (ACTION, write::vectors(&action, na)),
            ("timestamp", write::f32s(ts.iter().copied())),
            ("frame_index", write::i64s(0..n as i64)),
            (
                "episode_index",
                write::i64s(std::iter::repeat_n(e as i64, n)),
            ),
            ("index", write::i64s(index..index + n as i64)),
            ("task_index", write::i64s(std::iter::repeat_n(0, n))),
        ])
        .map_err(write::arrow_err)?;
        write::parquet(
            &out.join(format!("data/chunk-{chunk:03}/file-{file:03}.parquet")),
            &batch,
        )?;
        let f32_rows = |v: &[Vec<f64>]| -> Vec<Vec<f64>> {
            v.iter()
                .map(|r| r.iter().map(|&x| f64::from(x as f32)).collect())
                .collect()
        };
        let col = |v: Vec<f64>| -> Vec<Vec<f64>> { v.into_iter().map(|x| vec![x]).collect() };
        let sq = |x: f64| x * x;
        let count = n as u64;
        let mut st: HashMap<String, (Stats, bool)> = HashMap::new();
        st.insert(
            STATE.into(),
            (of_rows(&f32_rows(&state), ns, count, sq), false),
        );
        st.insert(
            ACTION.into(),
            (of_rows(&f32_rows(&action), na, count, sq), false),
        );
        st.insert(
            "timestamp".into(),
            (of_rows(&col(ts32), 1, count, sq), false),
        );
        let ints = |f: &dyn Fn(usize) -> i64| col((0..n).map(|i| f(i) as f64).collect());
        st.insert(
            "frame_index".into(),
            (of_rows(&ints(&|i| i as i64), 1, count, sq), false),
        );
        st.insert(
            "episode_index".into(),
            (of_rows(&ints(&|_| e as i64), 1, count, sq), false),
        );
        st.insert(
            "index".into(),
            (of_rows(&ints(&|i| index + i as i64), 1, count, sq), false),
        );
        st.insert(
            "task_index".into(),
            (of_rows(&ints(&|_| 0), 1, count, sq), false),
        );
        let mut row = Map::new();
        row.insert("episode_index".into(), json!(e));
        row.insert("tasks".into(), json!([m.task]));
        row.insert("length".into(), json!(n));
        row.insert("data/chunk_index".into(), json!(chunk));
        row.insert("data/file_index".into(), json!(file));
        row.insert("dataset_from_index".into(), json!(index));
        row.insert("dataset_to_index".into(), json!(index + n as i64));
        for (k, cam) in m.cameras.iter().enumerate() {
            let (path, first_ns, size, img) = &x.videos[k];
            let dest = out.join(format!(
                "videos/{}/chunk-{chunk:03}/file-{file:03}.mp4",
                cam.key
            ));
            if let Some(d) = dest.parent() {
                std::fs::create_dir_all(d)?;
            }
            std::fs::rename(path, &dest)?;
            sizes[k] = *size;
            let from = x.t0.saturating_sub(*first_ns) as f64 / 1e9;
            row.insert(format!("videos/{}/chunk_index", cam.key), json!(chunk));
            row.insert(format!("videos/{}/file_index", cam.key), json!(file));
            row.insert(format!("videos/{}/from_timestamp", cam.key), json!(from));
            row.insert(
                format!("videos/{}/to_timestamp", cam.key),
                json!(from + ts[n - 1] + 1.0 / fps),
            );
            st.insert(cam.key.clone(), (img.clone(), true));
        }
        row.insert("meta/episodes/chunk_index".into(), json!(0));
        row.insert("meta/episodes/file_index".into(), json!(0));
        ep_rows.push(row);
        all_stats.push(st);
        index += n as i64;
        report.frames += count;
        report.dropped += x.aligned.dropped;
        report.filled += x.aligned.filled;
    }
    report.episodes = made.len();
    let features = features(m, &sizes);
    // The dataset's statistics from its episodes'.
    let mut stats_json = Map::new();
    for key in features
        .as_object()
        .map(|o| o.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let eps: Vec<&Stats> = all_stats
            .iter()
            .filter_map(|s| s.get(&key).map(|x| &x.0))
            .collect();
        let image = all_stats
            .first()
            .and_then(|s| s.get(&key))
            .is_some_and(|x| x.1);
        if let Some(a) = aggregate(&eps) {
            stats_json.insert(key, a.to_json(image));
        }
    }
    write::json(&out.join("meta/stats.json"), &Value::Object(stats_json))?;
    write::tasks(
        &out.join("meta/tasks.parquet"),
        std::slice::from_ref(&m.task),
    )?;
    episodes_table(
        &out.join("meta/episodes/chunk-000/file-000.parquet"),
        &ep_rows,
        &all_stats,
    )?;
    let info = json!({
        "codebase_version": "v3.0",
        "robot_type": m.robot_type,
        "total_episodes": made.len(),
        "total_frames": index,
        "total_tasks": 1,
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200,
        "fps": m.fps,
        "splits": {"train": format!("0:{}", made.len())},
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": if m.cameras.is_empty() { Value::Null } else {
            json!("videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4")
        },
        "features": features,
    });
    write::json(&out.join("meta/info.json"), &info)
}

/// `info.json`'s features.
fn features(m: &Mapping, sizes: &[VideoFormat]) -> Value {
    let names = |c: &[Component]| -> Vec<String> { c.iter().map(|c| c.name.clone()).collect() };
    let mut f = Map::new();
    f.insert(
        STATE.into(),
        json!({"dtype": "float32", "shape": [m.state.len()], "names": names(&m.state)}),
    );
    f.insert(
        ACTION.into(),
        json!({"dtype": "float32", "shape": [m.action.len()], "names": names(&m.action)}),
    );
    for (cam, v) in m.cameras.iter().zip(sizes) {
        let (w, h) = v.size;
        let mut info = json!({
            "video.height": h, "video.width": w, "video.codec": v.codec,
            "video.pix_fmt": v.pix_fmt, "video.is_depth_map": v.depth.is_some(),
            "video.fps": m.fps, "video.channels": 3, "has_audio": false
        });
        if let (Some((near, far)), Some(o)) = (v.depth, info.as_object_mut()) {
            // What grey 0 and 255 stand for, so that a user can turn the pixels back into
            // metres: near + grey / 255 * (far - near).
            o.insert("video.depth_range_m".into(), json!([near, far]));
        }
        f.insert(
            cam.key.clone(),
            json!({
                "dtype": "video",
                "shape": [h, w, 3],
                "names": ["height", "width", "channels"],
                "info": info,
            }),
        );
    }
    f.insert(
        "timestamp".into(),
        json!({"dtype": "float32", "shape": [1], "names": null}),
    );
    for k in ["frame_index", "episode_index", "index", "task_index"] {
        f.insert(
            k.into(),
            json!({"dtype": "int64", "shape": [1], "names": null}),
        );
    }
    Value::Object(f)
}

/// `meta/episodes/chunk-000/file-000.parquet`: each episode's row, with its statistics as
/// `stats/FEATURE/STAT` columns.
fn episodes_table(
    path: &Path,
    rows: &[Map<String, Value>],
    stats: &[HashMap<String, (Stats, bool)>],
) -> Result<()> {
    let mut cols: Vec<(String, arrow_array::ArrayRef)> = Vec::new();
    let Some(first) = rows.first() else {
        return Ok(());
    };
    for key in first.keys() {
        let vals: Vec<&Value> = rows.iter().map(|r| &r[key]).collect();
        let col = if key == "tasks" {
            let l: Vec<Vec<String>> = vals
                .iter()
                .map(|v| {
                    v.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .collect();
            write::string_lists(&l)
        } else if key.ends_with("_timestamp") {
            write::f64s(vals.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)))
        } else {
            write::i64s(vals.iter().map(|v| v.as_i64().unwrap_or(0)))
        };
        cols.push((key.clone(), col));
    }
    let mut keys: Vec<&String> = stats[0].keys().collect();
    keys.sort();
    for key in keys {
        let image = stats[0][key].1;
        let per: Vec<&Stats> = stats.iter().map(|s| &s[key].0).collect();
        let list = |f: &dyn Fn(&Stats) -> Vec<f64>| -> arrow_array::ArrayRef {
            let v: Vec<Vec<f64>> = per.iter().map(|s| f(s)).collect();
            if image {
                write::f64_images(&v)
            } else {
                write::f64_lists(&v)
            }
        };
        cols.push((format!("stats/{key}/min"), list(&|s| s.min.clone())));
        cols.push((format!("stats/{key}/max"), list(&|s| s.max.clone())));
        cols.push((format!("stats/{key}/mean"), list(&|s| s.mean.clone())));
        cols.push((format!("stats/{key}/std"), list(&|s| s.std.clone())));
        cols.push((
            format!("stats/{key}/count"),
            write::i64_lists(&per.iter().map(|s| s.count as i64).collect::<Vec<_>>()),
        ));
        for (k, (_, q)) in QUANTILES.iter().enumerate() {
            cols.push((
                format!("stats/{key}/{q}"),
                list(&|s| s.quantiles[k].clone()),
            ));
        }
    }
    let batch = RecordBatch::try_from_iter(cols).map_err(write::arrow_err)?;
    write::parquet(path, &batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_as_lerobot_picks_them() {
        // numpy: np.round(np.linspace(0, n - 1, k)).astype(int)
        assert_eq!(sample_indices(3), [0, 1, 2]);
        let s = sample_indices(1000);
        assert_eq!((s.len(), s[0], s[s.len() - 1]), (177, 0, 999));
        assert_eq!(sample_indices(0), Vec::<usize>::new());
    }
}
