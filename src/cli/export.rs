//! `bagscope export`: recordings merged in time order, to any format.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;

use crate::cli::Error;
use bagscope_ops::timefmt;
use bagscope_reader::{Bag, Filter};

use super::args::{time_range, Range};

/// Copy chosen topics within a time range to a new, fully indexed recording (ROS 1 bag,
/// MCAP or rosbag2; messages byte for byte unless converted); with no range or topic, the
/// whole recording (repairs an unindexed or damaged one).
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The recordings to read (never written); several are merged in time order.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The new recording (written under a temporary name, then renamed; a device or a pipe
    /// such as /dev/null is written in place): `.bag`, `.mcap`, or a directory name for
    /// rosbag2 or Parquet (see --format).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Only these topics (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    /// bag, mcap, rosbag2-sqlite3, rosbag2-mcap, parquet (a directory of decoded Parquet
    /// files, one per topic, and per recording when several are given), mp4 (one video
    /// topic's packets, not re-encoded, from the keyframe before the start to the keyframe
    /// after the end), or gpx, kml, geojson (one fix topic's track: NavSatFix, GPSFix,
    /// LocationFix, or `--topic "/t.lat_path, /t.lon_path"`; fixes without a fix or a
    /// position left out and counted) (default: from the output's extension; no
    /// extension: rosbag2-sqlite3), or lerobot (a LeRobot v3 dataset directory made by
    /// --mapping: docs/lerobot.md).
    #[arg(long)]
    pub format: Option<String>,
    /// With --format lerobot: the mapping file (YAML) that says which expressions make
    /// observation.state and action, which topics are cameras, fps, alignment, task, episodes.
    #[arg(long, value_name = "MAP.yaml")]
    pub mapping: Option<PathBuf>,
    /// Compression: a bag none, lz4 (default) or bz2; MCAP none, lz4 or zstd (default);
    /// rosbag2 none (default), zstd-file or zstd-message.
    #[arg(long)]
    pub compression: Option<String>,
    /// Uncompressed bytes per chunk (bag, MCAP).
    #[arg(long, default_value_t = 768 * 1024)]
    pub chunk_size: usize,
    /// rosbag2: start a new storage file every this many MiB.
    #[arg(long)]
    pub split_mb: Option<u64>,
    /// rosbag2: start a new storage file every this many seconds of messages (rosbag2's
    /// max bag duration).
    #[arg(long)]
    pub split_duration: Option<f64>,
    /// Re-encode ROS 1 messages as ROS 2 (CDR, `pkg/msg/Type`, Header without seq, time as
    /// builtin_interfaces/Time); a type without a ROS 2 definition is translated from its
    /// ROS 1 one (and named), tf/tfMessage becomes tf2_msgs/msg/TFMessage.
    #[arg(long)]
    pub to_ros2: bool,
    /// With --to-ros2: convert only types with a ROS 2 definition of the same name (on the
    /// search path or shipped); list and leave out the others.
    #[arg(long, requires = "to_ros2")]
    pub strict_types: bool,
    /// Re-encode ROS 2 (CDR) messages in ROS 1 serialization (`pkg/Type`, Header with seq
    /// 0, builtin_interfaces/Time as time); types without a ROS 1 counterpart are listed
    /// and left out. For a .bag or MCAP output.
    #[arg(long)]
    pub to_ros1: bool,
    /// Migrate messages whose type has another definition in DIR (a folder of packages,
    /// a workspace, or of .msg files) to it: fields carried over by name (lossless
    /// widening), added ones at their defaults, dropped ones reported.
    #[arg(long, value_name = "DIR")]
    pub migrate: Option<PathBuf>,
    #[command(flatten)]
    pub range: Range,
    /// A message script: its virtual topic is written as a real topic with its definition
    /// (docs/scripts.md); with --format lerobot, the mapping may name it. Repeatable.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
}

/// Runs `bagscope export`.
pub fn run(a: &ExportArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    if a.format.as_deref() == Some("lerobot") || a.mapping.is_some() {
        return super::lerobot::run(a, opts);
    }
    let (start, end) = a.range.as_strs();
    export(Asked {
        opts,
        inputs: &a.inputs,
        out: &a.output,
        topics: &a.topics,
        start,
        end,
        compression: a.compression.as_deref(),
        chunk_size: a.chunk_size,
        format: a.format.as_deref(),
        split_mb: a.split_mb,
        split_duration: a.split_duration,
        to_ros2: a.to_ros2,
        strict_types: a.strict_types,
        to_ros1: a.to_ros1,
        migrate: a.migrate.as_deref(),
        scripts: &a.scripts,
    })
}

/// What `bagscope export` was asked.
struct Asked<'a> {
    /// How recordings are opened.
    opts: &'a bagscope_reader::OpenOptions,
    inputs: &'a [std::path::PathBuf],
    out: &'a Path,
    topics: &'a [String],
    start: Option<&'a str>,
    end: Option<&'a str>,
    compression: Option<&'a str>,
    chunk_size: usize,
    format: Option<&'a str>,
    split_mb: Option<u64>,
    split_duration: Option<f64>,
    to_ros2: bool,
    /// With `to_ros2`: no translated or mapped types.
    strict_types: bool,
    /// ROS 2 messages to ROS 1.
    to_ros1: bool,
    migrate: Option<&'a Path>,
    /// Message scripts whose virtual topics are written.
    scripts: &'a [PathBuf],
}

/// `bagscope export -o OUT.mp4 -t TOPIC`: a video topic's range muxed into an MP4 as it is.
fn export_mp4(
    bag: &Bag,
    a: &Asked<'_>,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
) -> crate::cli::Result<ExitCode> {
    let [topic] = a.topics else {
        return Err(Error::Invalid(
            "an .mp4 holds one video topic: name it with --topic".into(),
        ));
    };
    if a.inputs.len() > 1 || a.to_ros1 || a.to_ros2 || a.migrate.is_some() {
        return Err(Error::Invalid(
            "an .mp4 is written from one recording, as its packets are".into(),
        ));
    }
    let ix = bagscope_ops::media::video::VideoIndex::build(bag, topic, None)?;
    let w = bagscope_ops::media::video::mp4::write_mp4(bag, &ix, start_ns, end_ns, a.out)?;
    println!(
        "{}: {} frames ({} keyframes) of {topic}, {}×{} {}, {} bytes, not re-encoded",
        a.out.display(),
        w.frames,
        w.keyframes,
        w.width,
        w.height,
        ix.codec,
        w.bytes
    );
    Ok(ExitCode::SUCCESS)
}

/// `bagscope export -o OUT.gpx -t FIX_TOPIC`: a GPS track's range as GPX, KML or GeoJSON.
fn export_track(
    bag: &Bag,
    a: &Asked<'_>,
    range: (Option<u64>, Option<u64>),
    format: bagscope_ops::spatial::geo::out::TrackFormat,
) -> crate::cli::Result<ExitCode> {
    use bagscope_ops::spatial::geo::{out, read_track, TrackSource};
    let [topic] = a.topics else {
        return Err(Error::Invalid(
            "a track file holds one fix topic (sensor_msgs/NavSatFix, gps_common/GPSFix, \
             foxglove.LocationFix): name it with --topic"
                .into(),
        ));
    };
    if a.inputs.len() > 1 || a.to_ros1 || a.to_ros2 || a.migrate.is_some() {
        return Err(Error::Invalid(
            "a track is written from one recording's fixes".into(),
        ));
    }
    let source = match topic.split_once(',') {
        Some((lat, lon)) => TrackSource::Paths {
            lat: lat.trim().into(),
            lon: lon.trim().into(),
        },
        None => TrackSource::Topic(topic.clone()),
    };
    let t = read_track(
        bag,
        &source,
        range,
        bagscope_reader::machine_threads(),
        &AtomicBool::new(false),
    )?;
    if t.is_empty() {
        return Err(Error::Invalid(format!(
            "{topic}: no fix to write in the range ({})",
            match t.summary_of_skipped() {
                s if s.is_empty() => "no message".to_string(),
                s => s,
            }
        )));
    }
    out::write_track(&t, format, a.out)?;
    println!("{}: {} fixes of {topic}", a.out.display(), t.len());
    let skipped = t.summary_of_skipped();
    if !skipped.is_empty() {
        eprintln!("bagscope: left out: {skipped}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `bagscope export`: one or several recordings, merged in time order, to any format.
fn export(a: Asked<'_>) -> crate::cli::Result<ExitCode> {
    use bagscope_ops::tables::export::OutputFormat;
    use bagscope_reader::storage::rosbag2::writer::Rosbag2Compression;
    let mut bags = Vec::new();
    for p in a.inputs {
        let bag = super::scripts::open(p, a.scripts, a.opts)?;
        for w in bag.warnings() {
            eprintln!("bagscope: warning: {}: {w}", p.display());
        }
        // A recording whose storage yields nothing of what its metadata lists is not
        // exported as an empty file.
        let s = bag.summary();
        if let Some((_, lost)) = s
            .storage_facts
            .iter()
            .find(|(k, _)| k == bagscope_reader::storage::rosbag2::MISSING_FACT)
        {
            if s.message_count == 0 {
                return Err(Error::Invalid(format!(
                    "{}: none of its messages could be read (missing: {lost}); nothing exported",
                    p.display()
                )));
            }
        }
        bags.push(bag);
    }
    let Some(first) = bags.first() else {
        return Err(Error::Invalid("no recording to export".into()));
    };
    // With several inputs, +S times count from the earliest start.
    let (start_ns, end_ns) = time_range(first, a.start, a.end)?;
    let mp4 = a.format == Some("mp4")
        || (a.format.is_none()
            && a.out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("mp4")));
    if mp4 {
        return export_mp4(first, &a, start_ns, end_ns);
    }
    use bagscope_ops::spatial::geo::out::TrackFormat;
    let track = match a.format {
        Some(f) => TrackFormat::parse(f),
        None => TrackFormat::from_path(a.out),
    };
    if let Some(f) = track {
        return export_track(first, &a, (start_ns, end_ns), f);
    }
    let format = match a.format {
        Some(f) => OutputFormat::parse(f).ok_or_else(|| {
            Error::Invalid(format!(
                "unknown format {f:?}: bag, mcap, rosbag2-sqlite3, rosbag2-mcap or parquet"
            ))
        })?,
        None => OutputFormat::from_path(a.out),
    };
    let rosbag2 = matches!(
        format,
        OutputFormat::Rosbag2Sqlite3 | OutputFormat::Rosbag2Mcap
    );
    let mut r2 = Rosbag2Compression::None;
    let compression = match (a.compression, format) {
        (None, OutputFormat::Ros1Bag) => bagscope_reader::Compression::Lz4,
        (None, _) => bagscope_reader::Compression::Zstd,
        (Some("none"), _) => bagscope_reader::Compression::None,
        (Some("lz4"), OutputFormat::Ros1Bag | OutputFormat::Mcap) => bagscope_reader::Compression::Lz4,
        (Some("bz2"), OutputFormat::Ros1Bag) => bagscope_reader::Compression::Bz2,
        (Some("zstd"), OutputFormat::Mcap | OutputFormat::Parquet) => bagscope_reader::Compression::Zstd,
        (Some("zstd-file"), _) if rosbag2 => {
            r2 = Rosbag2Compression::File;
            bagscope_reader::Compression::None
        }
        (Some("zstd-message" | "zstd"), _) if rosbag2 => {
            r2 = Rosbag2Compression::Message;
            bagscope_reader::Compression::None
        }
        (Some(c), f) => {
            return Err(Error::Invalid(format!(
                "compression {c:?} does not apply to {}: a bag takes none, lz4 or bz2; MCAP none, lz4 or zstd; rosbag2 none, zstd-file or zstd-message",
                f.name()
            )))
        }
    };
    let connections = if a.topics.is_empty() {
        None
    } else {
        Some(first.connections_of_topics(a.topics)?)
    };
    let opts = bagscope_ops::tables::export::ExportOptions {
        filter: Filter {
            connections,
            start_ns,
            end_ns,
        },
        write: bagscope_reader::WriteOptions {
            compression,
            chunk_size: a.chunk_size,
        },
        format: Some(format),
        rosbag2_compression: r2,
        split_bytes: a.split_mb.map(|m| m << 20),
        // Seconds to ns; NaN and negatives become 0, which the writer refuses as too short.
        split_ns: a.split_duration.map(|s| (s * 1e9) as u64),
        to_ros2: a.to_ros2,
        strict_types: a.strict_types,
        to_ros1: a.to_ros1,
        migrate: a.migrate.map(Path::to_path_buf),
        // The first recording's bookmarks (MCAP metadata records or its sidecar), carried.
        bookmarks: None,
    };
    if a.split_mb == Some(0) {
        return Err(Error::Invalid("--split-mb must be at least 1".into()));
    }
    let t0 = std::time::Instant::now();
    let r = bagscope_ops::tables::export::export_many(
        &bags,
        a.out,
        &opts,
        &AtomicBool::new(false),
        &mut |_| {},
    )?;
    for s in &r.skipped {
        eprintln!("bagscope: left out: {s}");
    }
    for n in &r.notes {
        eprintln!("bagscope: {n}");
    }
    for u in &r.unconverted {
        eprintln!("bagscope: {u}");
    }
    eprintln!(
        "{} ({}): {} messages on {} connections, {} in {:.2} s",
        r.path.display(),
        r.format.name(),
        r.messages,
        r.connections,
        timefmt::bytes(r.file_size),
        t0.elapsed().as_secs_f64()
    );
    // Written, but not everything: say so in the exit code.
    if !r.unconverted.is_empty() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
