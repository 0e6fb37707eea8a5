//! The command line: `bagscope info|check|echo|csv|export`, sharing the library with the app.
//! Every verb takes any recording bagscope reads (ROS 1 bag, MCAP, rosbag2 directory or file),
//! recognised by content.

// The verbs' doc comments are their `--help` text (clap), written for a terminal: brackets
// there are text (`/topic.field[3]`), not links.
#![allow(rustdoc::broken_intra_doc_links)]

mod args;
mod bench;
mod bench_script;
mod bench_video;
mod catalog;
mod check;
mod compare;
mod csv;
mod echo;
mod error;
mod expect;
mod export;
mod find;
mod frames;
mod gen;
mod glyphs;
mod image;
mod image_overlay;
mod info;
mod keys;
mod lerobot;
mod log;
mod play;
mod record;
mod scripts;
mod serve;
mod sparse;
mod tf;
mod timing;

pub use error::{Error, Result};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The version and the commit it was built from (build.rs).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("BAGSCOPE_COMMIT"),
    ")"
);

/// bagscope: a fast inspector and timeline viewer for robot recordings (ROS 1 bags, rosbag2,
/// MCAP).
#[derive(Parser, Debug)]
#[command(version = VERSION, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Recordings to open in the app: ROS 1 bags, MCAP files, rosbag2 directories, their
    /// metadata.yaml or storage files; several go on one timeline (with none: the demo recording
    /// on the first run, then the start screen with the recent files).
    pub bags: Vec<PathBuf>,
    /// A layout file to show the recordings with (bagscope's JSON, a Lichtblick/Foxglove
    /// layout, a PlotJuggler XML).
    #[arg(long, value_name = "FILE")]
    pub layout: Option<PathBuf>,
    /// A script file for the app (repeatable): a message script's virtual topic is in the
    /// recording (opened alone), a series script's series can be plotted by its name. See
    /// docs/scripts.md.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
    /// A rules file (docs/expectations.md) the recording is checked against once open: its
    /// failures shown as red bookmarks on the timeline.
    #[arg(long, value_name = "RULES.yaml")]
    pub expect: Option<PathBuf>,
    /// Directories of ROS packages (`PKG/msg/Type.msg`) searched for definitions a recording
    /// does not store, before BAGSCOPE_MSG_PATH, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH and the
    /// definitions bagscope ships (repeatable).
    #[arg(long = "msg-path", global = true)]
    pub msg_path: Vec<PathBuf>,
    /// A URDF file to use as the robot model in place of the recordings' /robot_description:
    /// its joints move its links in the transform tree (`tf`, the app) and the 3D panel draws
    /// it; its meshes are looked for beside it and on the message search path.
    #[arg(long, value_name = "FILE", global = true)]
    pub urdf: Option<PathBuf>,
}

/// The verbs; each one's arguments and body are in its own file.
///
/// Each verb's arguments are built only when it is the one run (`defer`): building all of
/// them was 0.3 ms of every command's start, as long as the rest of opening a recording.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Command {
    /// Summarise a recording like `rosbag info`: topics, types, counts, times, compression and
    /// where each definition came from; reads only the index or summary where there is one.
    Info(info::InfoArgs),
    /// Catalog every recording under some directories into Parquet tables (`recordings`,
    /// `topics`) a query engine reads; incremental.
    Catalog(catalog::CatalogArgs),
    /// Read every message of every chunk (all cores), verify every record; exit 1 if damaged.
    Check(check::CheckArgs),
    /// Print messages in time order, decoded from their definitions (ROS 1, CDR, protobuf,
    /// JSON).
    Echo(echo::EchoArgs),
    /// Field series as CSV: time_ns and one column per path (/topic.field.sub[3].x).
    Csv(csv::CsvArgs),
    /// Copy chosen topics within a time range to a new, fully indexed recording (ROS 1 bag,
    /// MCAP or rosbag2; messages byte for byte unless converted); with no range or topic, the
    /// whole recording (repairs an unindexed or damaged one).
    Export(export::ExportArgs),
    /// Typed code (C++ header, Rust module, Python module) for the types a recording uses:
    /// structs, loaders from ROS 1 and CDR bytes, JSON printers.
    Gen(gen::GenArgs),
    /// One image message as a PNG: raw Image (every common encoding), CompressedImage (jpeg,
    /// png, compressedDepth), an OccupancyGrid map, a LaserScan or PointCloud2 seen from above;
    /// depth, float, ranges and heights through a colormap; a video topic's frame.
    Image(image::ImageArgs),
    /// Every image of a topic (cameras, maps, scans and clouds from above) as numbered PNG
    /// files, in time order, decoded and written on all cores; as image_view's extract_images.
    Frames(frames::FramesArgs),
    /// The log messages (/rosout: rosgraph_msgs/Log, rcl_interfaces/msg/Log) of a recording,
    /// in time order: `time [LEVEL] node: text (file:line)`.
    Log(log::LogArgs),
    /// The transform tree (/tf, /tf_static) at a time, each frame with its transform from its
    /// parent; or, with --target and --source, the pose of one frame in another (as tf_echo).
    Tf(tf::TfArgs),
    /// The messages where a field meets a condition, in time order, such as
    /// `/odom.pose.pose.position.x >= 1.5`, `/battery.data crosses 12.2` or
    /// `/rosout.msg contains battery`; operators: `>`, `>=`, `<`, `<=`, `==`, `!=`, `crosses`,
    /// `contains`.
    Find(find::FindArgs),
    /// A topic's timing: mean rate, median period, the gaps longer than a few periods, and
    /// `header.stamp` minus the receive time where messages have a header.
    Timing(timing::TimingArgs),
    /// Runs side by side: per topic, messages, mean rate, longest gap, first and last time; for
    /// each --field, min, mean, max and std; each run against the first (B − A).
    Compare(compare::CompareArgs),
    /// Publish a recording's messages onto a live ROS 1 system (--ros1, the default) or ROS 2
    /// domain (--ros2) at their recorded times (scaled by --rate), byte for byte, with their
    /// types, md5sums, definitions and latching (ROS 1) or recorded QoS (ROS 2); no ROS install
    /// needed. Ctrl-C stops.
    Play(play::PlayArgs),
    /// Record a live ROS 1 system's topics (the bytes as received, with each publisher's type,
    /// md5sum, definition and latching) or a ROS 2 domain's (--ros2: CDR bytes as received, the
    /// type's definition from --msg-path or the shipped interfaces, the publishers' QoS). The
    /// file is written as OUT.active and renamed when recording ends (Ctrl-C); a recorder killed
    /// before leaves OUT.active, which bagscope reads.
    Record(record::RecordArgs),
    /// Serve recordings to Foxglove and Lichtblick over the Foxglove WebSocket protocol:
    /// channels with their schemas, messages as stored at --speed, each client with its own
    /// subscriptions and playback (play, pause, seek, speed). 127.0.0.1 unless --host.
    Serve(serve::ServeArgs),
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
    /// Time library operations on a bag (JSON), for scripts/bench/ros1.py.
    #[command(hide = true)]
    Bench {
        /// The recording (ROS 1 bag, MCAP file, rosbag2 directory or file).
        bag: PathBuf,
        /// summary, tables, iterate, check or all; video-decode, video-seek (--runs: seeks);
        /// script:VALUES.csv (a series script over every point sample, the samples written).
        #[arg(long, default_value = "all")]
        op: String,
        /// Runs; the best is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
}

/// The executable: `args` (the program's name first) parsed, then the app or a verb.
pub fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = Cli::parse_from(args);
    // The command line is where settings are read: the library takes them as options.
    let opts = bagscope_reader::OpenOptions::default().with_msg_path(args.msg_path.clone());
    match args.command {
        Some(cmd) => run(cmd, &opts, args.urdf.as_deref()),
        None => open_app(
            args.bags,
            args.layout,
            args.scripts,
            args.msg_path,
            args.urdf,
            args.expect,
        ),
    }
}

/// The exit status of `code` as a number (for a caller that exits itself: Python).
pub fn exit_status(code: ExitCode) -> u8 {
    (0..=u8::MAX)
        .find(|&n| ExitCode::from(n) == code)
        .unwrap_or(1)
}

/// Opens the window (the start screen, or `bag`).
#[cfg(feature = "gui")]
fn open_app(
    bags: Vec<PathBuf>,
    layout: Option<PathBuf>,
    scripts: Vec<PathBuf>,
    msg_path: Vec<PathBuf>,
    urdf: Option<PathBuf>,
    expect: Option<PathBuf>,
) -> ExitCode {
    // A rules file's mistakes are said here, with their line, before the window opens.
    if let Some(Err(e)) = expect.as_deref().map(expect::read_rules) {
        eprintln!("bagscope: {e}");
        return ExitCode::from(2);
    }
    let read = scripts::message_scripts(&scripts).and_then(|messages| {
        let series = scripts::load(&scripts, &[], &mut |w| eprintln!("bagscope: {w}"))?;
        Ok(bagscope_app::Scripts { messages, series })
    });
    let scripts = match read {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bagscope: {e}");
            return ExitCode::from(2);
        }
    };
    match bagscope_app::run(bags, layout, msg_path, urdf, scripts, expect) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bagscope: cannot open a window: {e}");
            ExitCode::from(2)
        }
    }
}

/// Built without the app: say so, and show what the command line does.
#[cfg(not(feature = "gui"))]
fn open_app(
    bags: Vec<PathBuf>,
    _layout: Option<PathBuf>,
    _scripts: Vec<PathBuf>,
    _msg_path: Vec<PathBuf>,
    _urdf: Option<PathBuf>,
    _expect: Option<PathBuf>,
) -> ExitCode {
    use clap::CommandFactory;
    if let Some(b) = bags.first() {
        eprintln!(
            "bagscope: built without the desktop app (feature \"gui\"); for a summary run: bagscope info {}",
            b.display()
        );
        return ExitCode::from(2);
    }
    let _ = Cli::command().print_long_help();
    ExitCode::SUCCESS
}

/// Runs a verb, its recordings opened with `opts` (and the robot model read from `urdf`, where
/// given, in place of theirs); `Ok(code)` is the process exit code.
pub fn run(
    cmd: Command,
    opts: &bagscope_reader::OpenOptions,
    urdf: Option<&std::path::Path>,
) -> ExitCode {
    let r = match cmd {
        Command::Info(a) => info::run(&a, opts),
        Command::Catalog(a) => catalog::run(&a, opts),
        Command::Check(a) => check::run(&a, opts),
        Command::Echo(a) => echo::run(&a, opts),
        Command::Csv(a) => csv::run(&a, opts),
        Command::Export(a) => export::run(&a, opts),
        Command::Gen(a) => gen::run(&a, opts),
        Command::Image(a) => image::run(&a, opts, urdf),
        Command::Frames(a) => frames::run(&a, opts),
        Command::Log(a) => log::run(&a, opts),
        Command::Tf(a) => tf::run(&a, opts, urdf),
        Command::Find(a) => find::run(&a, opts),
        Command::Timing(a) => timing::run(&a, opts),
        Command::Compare(a) => compare::run(&a, opts),
        Command::Play(a) => play::run(&a, opts),
        Command::Record(a) => record::run(&a, opts),
        Command::Serve(a) => serve::run(&a, opts),
        Command::Demo { out, seconds } => bagscope_ops::demo::write_demo(&out, seconds)
            .map(|n| {
                println!("{}: {n} messages", out.display());
                ExitCode::SUCCESS
            })
            .map_err(Error::from),
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
