//! The command line: `bagscope info|check|echo|csv|export`, sharing the library with the app.
//! Every verb takes any recording bagscope reads (ROS 1 bag, MCAP, rosbag2 directory or file),
//! recognised by content.

mod bench;
mod decode;
mod info;
mod sparse;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// bagscope: a fast inspector and timeline viewer for robot recordings (ROS 1 bags, rosbag2,
/// MCAP).
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Recordings to open in the app: ROS 1 bags, MCAP files, rosbag2 directories, their
    /// metadata.yaml or storage files; several go on one timeline (with none: the demo recording
    /// on the first run, then the start screen with the recent files).
    pub bags: Vec<PathBuf>,
    /// Directories of ROS packages (`PKG/msg/Type.msg`) searched for definitions a recording
    /// does not store, before BAGSCOPE_MSG_PATH, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH and the
    /// definitions bagscope ships (repeatable).
    #[arg(long = "msg-path", global = true)]
    pub msg_path: Vec<PathBuf>,
}

/// The verbs.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarise a recording like `rosbag info`: topics, types, counts, times, compression and
    /// where each definition came from; reads only the index or summary where there is one.
    Info {
        /// Recordings to summarise (ROS 1 bags, MCAP files, rosbag2 directories or files).
        #[arg(required = true)]
        bags: Vec<PathBuf>,
        /// Also build the message tables and measure each topic's rate.
        #[arg(long)]
        freq: bool,
        /// One JSON object per bag, on one line each.
        #[arg(long)]
        json: bool,
    },
    /// Read every message of every chunk (all cores), verify every record; exit 1 if damaged.
    Check {
        /// Recordings to check.
        #[arg(required = true)]
        bags: Vec<PathBuf>,
        /// Threads to decompress on (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Print messages in time order, decoded from their definitions (ROS 1, CDR, protobuf,
    /// JSON).
    Echo {
        /// The recording (ROS 1 bag, MCAP file, rosbag2 directory or file).
        bag: PathBuf,
        /// Only these topics (repeatable).
        #[arg(long = "topic", short = 't')]
        topics: Vec<String>,
        /// Start time: epoch seconds, or +S seconds from the bag's start.
        #[arg(long, allow_hyphen_values = true)]
        start: Option<String>,
        /// End time (exclusive), same forms as --start.
        #[arg(long, allow_hyphen_values = true)]
        end: Option<String>,
        /// One JSON object a line: {"time_ns", "topic", "message"}.
        #[arg(long)]
        json: bool,
        /// Stop after this many messages (as `rostopic echo -n`).
        #[arg(long = "count", short = 'n')]
        count: Option<u64>,
    },
    /// Field series as CSV: time_ns and one column per path (/topic.field.sub[3].x).
    Csv {
        /// The recording (ROS 1 bag, MCAP file, rosbag2 directory or file).
        bag: PathBuf,
        /// Field paths.
        #[arg(required = true)]
        paths: Vec<String>,
        /// Start time: epoch seconds, or +S seconds from the bag's start.
        #[arg(long, allow_hyphen_values = true)]
        start: Option<String>,
        /// End time (exclusive).
        #[arg(long, allow_hyphen_values = true)]
        end: Option<String>,
        /// Write here (atomically) instead of to standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Copy chosen topics within a time range to a new, fully indexed recording (ROS 1 bag,
    /// MCAP or rosbag2; messages byte for byte unless converted); with no range or topic, the
    /// whole recording (repairs an unindexed or damaged one).
    Export {
        /// The recordings to read (never written); several are merged in time order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The new recording (written under a temporary name, then renamed): `.bag`, `.mcap`,
        /// or a directory name for rosbag2 (see --format).
        #[arg(short, long)]
        output: PathBuf,
        /// Only these topics (repeatable).
        #[arg(long = "topic", short = 't')]
        topics: Vec<String>,
        /// Start time: epoch seconds, or +S seconds from the (first) recording's start.
        #[arg(long, allow_hyphen_values = true)]
        start: Option<String>,
        /// End time (exclusive), same forms as --start.
        #[arg(long, allow_hyphen_values = true)]
        end: Option<String>,
        /// bag, mcap, rosbag2-sqlite3 or rosbag2-mcap (default: from the output's extension;
        /// no extension: rosbag2-sqlite3).
        #[arg(long)]
        format: Option<String>,
        /// Compression: a bag none, lz4 (default) or bz2; MCAP none, lz4 or zstd (default);
        /// rosbag2 none (default), zstd-file or zstd-message.
        #[arg(long)]
        compression: Option<String>,
        /// Uncompressed bytes per chunk (bag, MCAP).
        #[arg(long, default_value_t = 768 * 1024)]
        chunk_size: usize,
        /// rosbag2: start a new storage file every this many MiB.
        #[arg(long)]
        split_mb: Option<u64>,
        /// rosbag2: start a new storage file every this many seconds of messages (rosbag2's
        /// max bag duration).
        #[arg(long)]
        split_duration: Option<f64>,
        /// Re-encode ROS 1 messages as ROS 2 (CDR, `pkg/msg/Type`, Header without seq, time as
        /// builtin_interfaces/Time); a type without a ROS 2 definition is translated from its
        /// ROS 1 one (and named), tf/tfMessage becomes tf2_msgs/msg/TFMessage.
        #[arg(long)]
        to_ros2: bool,
        /// With --to-ros2: convert only types with a ROS 2 definition of the same name (on the
        /// search path or shipped); list and leave out the others.
        #[arg(long, requires = "to_ros2")]
        strict_types: bool,
        /// Re-encode ROS 2 (CDR) messages in ROS 1 serialization (`pkg/Type`, Header with seq
        /// 0, builtin_interfaces/Time as time); types without a ROS 1 counterpart are listed
        /// and left out. For a .bag or MCAP output.
        #[arg(long)]
        to_ros1: bool,
        /// Migrate messages whose type has another definition in DIR (a folder of packages,
        /// a workspace, or of .msg files) to it: fields carried over by name (lossless
        /// widening), added ones at their defaults, dropped ones reported.
        #[arg(long, value_name = "DIR")]
        migrate: Option<PathBuf>,
    },
    /// Typed code (C++ header, Rust module, Python module) for the types a recording uses:
    /// structs, loaders from ROS 1 and CDR bytes, JSON printers.
    Gen {
        /// The recording whose definitions are used.
        bag: PathBuf,
        /// cpp, rust or python.
        #[arg(long)]
        lang: String,
        /// Directory to write into (bagscope_msgs.hpp / .rs / .py).
        #[arg(short, long, default_value = ".")]
        output: PathBuf,
        /// Only the types of these topics (repeatable).
        #[arg(long = "topic", short = 't')]
        topics: Vec<String>,
    },
    /// One image message as a PNG: raw Image (every common encoding), CompressedImage (jpeg,
    /// png, compressedDepth), an OccupancyGrid map, a LaserScan or PointCloud2 seen from above;
    /// depth, float, ranges and heights through a colormap.
    Image {
        /// The recording.
        bag: PathBuf,
        /// The image topic.
        topic: String,
        /// The message at or before this time (epoch seconds, or +S from the start).
        #[arg(long, conflicts_with = "index")]
        at: Option<String>,
        /// The topic's N-th message (0-based; default 0).
        #[arg(long)]
        index: Option<usize>,
        /// The PNG to write (atomically).
        #[arg(short, long)]
        output: PathBuf,
        /// grey or turbo, for single-channel images (default: turbo for depth and float).
        #[arg(long)]
        colormap: Option<String>,
        /// Value drawn as the colormap's start (default: the image's smallest valid value).
        #[arg(long, requires = "max")]
        min: Option<f32>,
        /// Value drawn as the colormap's end.
        #[arg(long, requires = "min")]
        max: Option<f32>,
        /// Quarter turns clockwise.
        #[arg(long, default_value_t = 0)]
        rotate: u8,
    },
    /// Every image of a topic (cameras, maps, scans and clouds from above) as numbered PNG
    /// files, in time order, decoded and written on all cores; as image_view's extract_images.
    Frames {
        /// The recording.
        bag: PathBuf,
        /// The image topic.
        topic: String,
        /// The folder to write into (made if missing): TOPIC_NNNNNN_TIMENS.png.
        #[arg(short, long)]
        output: PathBuf,
        /// Start time: epoch seconds, or +S seconds from the bag's start.
        #[arg(long, allow_hyphen_values = true)]
        start: Option<String>,
        /// End time (exclusive), same forms as --start.
        #[arg(long, allow_hyphen_values = true)]
        end: Option<String>,
        /// Only every N-th message.
        #[arg(long, default_value_t = 1)]
        every: usize,
        /// grey or turbo, for single-channel images (default: turbo for depth and float).
        #[arg(long)]
        colormap: Option<String>,
        /// Value drawn as the colormap's start, the same for every frame (default: each
        /// frame's own range).
        #[arg(long, requires = "max")]
        min: Option<f32>,
        /// Value drawn as the colormap's end.
        #[arg(long, requires = "min")]
        max: Option<f32>,
        /// Quarter turns clockwise.
        #[arg(long, default_value_t = 0)]
        rotate: u8,
    },
    /// The log messages (/rosout: rosgraph_msgs/Log, rcl_interfaces/msg/Log) of a recording,
    /// in time order: `time [LEVEL] node: text (file:line)`.
    Log {
        /// The recording.
        bag: PathBuf,
        /// Only this severity and above: debug, info, warn, error, fatal.
        #[arg(long)]
        level: Option<String>,
        /// Only nodes whose name contains this.
        #[arg(long)]
        node: Option<String>,
        /// Only messages whose text contains this (case-insensitive).
        #[arg(long)]
        grep: Option<String>,
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
    },
    /// The transform tree (/tf, /tf_static) at a time, each frame with its transform from its
    /// parent; or, with --target and --source, the pose of one frame in another (as tf_echo).
    Tf {
        /// The recording.
        bag: PathBuf,
        /// The time: epoch seconds, or +S from the start (default: the end of the recording).
        #[arg(long, allow_hyphen_values = true)]
        at: Option<String>,
        /// The frame to express the pose in (with --source).
        #[arg(long, requires = "source")]
        target: Option<String>,
        /// The frame whose pose is printed (with --target).
        #[arg(long, requires = "target")]
        source: Option<String>,
        /// With --target and --source: the pose over the whole recording as CSV (time_ns, x,
        /// y, z, qx, qy, qz, qw, roll, pitch, yaw), one row each time a frame between them moved.
        #[arg(long, requires = "source", conflicts_with = "at")]
        track: bool,
    },
    /// The messages where a field meets a condition, in time order, such as
    /// `/odom.pose.pose.position.x >= 1.5`, `/battery.data crosses 12.2` or
    /// `/rosout.msg contains battery`; operators: `>`, `>=`, `<`, `<=`, `==`, `!=`, `crosses`,
    /// `contains`.
    Find {
        /// The recording.
        bag: PathBuf,
        /// The query: PATH OP VALUE.
        query: String,
    },
    /// A topic's timing: mean rate, median period, the gaps longer than a few periods, and
    /// `header.stamp` minus the receive time where messages have a header.
    Timing {
        /// The recording.
        bag: PathBuf,
        /// The topic.
        topic: String,
        /// Report gaps longer than this many median periods.
        #[arg(long, default_value_t = 3.0)]
        gap_factor: f64,
        /// Gaps listed at most.
        #[arg(long, default_value_t = 20)]
        max_gaps: usize,
    },
    /// Write the demo bag (a small robot driving a figure of eight) to a file.
    Demo {
        /// Where to write it.
        out: PathBuf,
        /// Length of the recording in seconds.
        #[arg(long, default_value_t = 180)]
        seconds: u32,
    },
    /// Write a sparse benchmark recording (a real index, camera pixels left as holes): the
    /// Scale figures' 1 GB to 1 TB recordings, 200,000,000 messages per TiB on 100 topics.
    #[command(hide = true)]
    GenSparse {
        /// Where to write it.
        out: PathBuf,
        /// bag (ROS 1 2.0), mcap, or rosbag2-sqlite3 (small messages only, not sparse).
        #[arg(long, default_value = "bag")]
        format: String,
        /// Apparent size: 1G, 100G, 1T, ...
        #[arg(long, default_value = "1G", value_parser = sparse::parse_size)]
        size: u64,
        /// Messages (default: 200,000,000 per TiB of --size).
        #[arg(long, default_value_t = 0)]
        messages: u64,
        /// Bytes per chunk.
        #[arg(long, default_value = "32M", value_parser = sparse::parse_size)]
        chunk: u64,
        /// Leave the index out, as a recording cut off does.
        #[arg(long)]
        no_index: bool,
    },
    /// Time library operations on a bag (JSON), for scripts/bench.py.
    #[command(hide = true)]
    Bench {
        /// The recording (ROS 1 bag, MCAP file, rosbag2 directory or file).
        bag: PathBuf,
        /// summary, tables, iterate, check or all.
        #[arg(long, default_value = "all")]
        op: String,
        /// Runs; the best is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
}

/// Runs a verb; `Ok(code)` is the process exit code.
pub fn run(cmd: Command) -> ExitCode {
    let r = match cmd {
        Command::Info { bags, freq, json } => info::info(&bags, freq, json),
        Command::Check { bags, threads } => info::check(&bags, threads),
        Command::Echo {
            bag,
            topics,
            start,
            end,
            json,
            count,
        } => decode::echo(&bag, &topics, start.as_deref(), end.as_deref(), json, count),
        Command::Csv {
            bag,
            paths,
            start,
            end,
            output,
        } => decode::csv(
            &bag,
            &paths,
            start.as_deref(),
            end.as_deref(),
            output.as_ref(),
        ),
        Command::Export {
            inputs,
            output,
            topics,
            start,
            end,
            format,
            compression,
            chunk_size,
            split_mb,
            split_duration,
            to_ros2,
            strict_types,
            to_ros1,
            migrate,
        } => decode::export(decode::ExportArgs {
            strict_types,
            inputs: &inputs,
            out: &output,
            topics: &topics,
            start: start.as_deref(),
            end: end.as_deref(),
            compression: compression.as_deref(),
            chunk_size,
            format: format.as_deref(),
            split_mb,
            split_duration,
            to_ros2,
            to_ros1,
            migrate: migrate.as_deref(),
        }),
        Command::Gen {
            bag,
            lang,
            output,
            topics,
        } => decode::gen(&bag, &lang, &output, &topics),
        Command::Image {
            bag,
            topic,
            at,
            index,
            output,
            colormap,
            min,
            max,
            rotate,
        } => decode::image(decode::ImageArgs {
            bag: &bag,
            topic: &topic,
            at: at.as_deref(),
            index,
            out: &output,
            colormap: colormap.as_deref(),
            range: min.zip(max),
            rotate,
        }),
        Command::Frames {
            bag,
            topic,
            output,
            start,
            end,
            every,
            colormap,
            min,
            max,
            rotate,
        } => decode::frames(decode::FramesArgs {
            bag: &bag,
            topic: &topic,
            out: &output,
            start: start.as_deref(),
            end: end.as_deref(),
            every,
            colormap: colormap.as_deref(),
            range: min.zip(max),
            rotate,
        }),
        Command::Log {
            bag,
            level,
            node,
            grep,
            json,
        } => decode::log(
            &bag,
            level.as_deref(),
            node.as_deref(),
            grep.as_deref(),
            json,
        ),
        Command::Find { bag, query } => decode::find(&bag, &query),
        Command::Tf {
            bag,
            at,
            target,
            source,
            track,
        } => decode::tf(&bag, at.as_deref(), target.zip(source), track),
        Command::Timing {
            bag,
            topic,
            gap_factor,
            max_gaps,
        } => decode::timing(&bag, &topic, gap_factor, max_gaps),
        Command::Demo { out, seconds } => bagscope::demo::write_demo(&out, seconds).map(|n| {
            println!("{}: {n} messages", out.display());
            ExitCode::SUCCESS
        }),
        Command::GenSparse {
            out,
            format,
            size,
            messages,
            chunk,
            no_index,
        } => sparse::check_out(&out)
            .and_then(|()| {
                sparse::generate(&sparse::SparseArgs {
                    out,
                    format,
                    size,
                    messages,
                    chunk,
                    no_index,
                })
            })
            .map(|()| ExitCode::SUCCESS),
        Command::Bench { bag, op, runs } => bench::bench(&bag, &op, runs),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bagscope: {e}");
            ExitCode::from(2)
        }
    }
}
