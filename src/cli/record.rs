//! `bagscope record`: a live ROS 1 system's or ROS 2 domain's messages to a bag or MCAP file,
//! without a ROS install.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use crate::cli::Error;
use bagscope_live::record::{self, Format, RecordOptions, Select};
use bagscope_live::ros1::{Node, NodeOptions};
use bagscope_live::ros2::{Participant, ParticipantOptions};
use bagscope_ops::timefmt;

/// Record a live ROS 1 system's topics (the bytes as received, with each publisher's type,
/// md5sum, definition and latching) or a ROS 2 domain's (--ros2: CDR bytes as received, the
/// type's definition from --msg-path or the shipped interfaces, the publishers' QoS). The file
/// is written as OUT.active and renamed when recording ends (Ctrl-C); a recorder killed before
/// leaves OUT.active, which bagscope reads.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The file to write.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Topics to record (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    /// Also every topic whose name matches this regular expression (repeatable).
    #[arg(long = "regex", short = 'e')]
    pub regex: Vec<String>,
    /// Every topic, those that appear later too.
    #[arg(long, short = 'a')]
    pub all: bool,
    /// Record from the ROS 1 master at URI (default: ROS_MASTER_URI, else
    /// http://localhost:11311/).
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "URI")]
    pub ros1: Option<String>,
    /// Record from a ROS 2 (DDS) domain: ROS_DOMAIN_ID unless --domain; discovery on this
    /// machine only with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST.
    #[arg(long, conflicts_with = "ros1")]
    pub ros2: bool,
    /// The ROS 2 domain (0 to 232).
    #[arg(long, requires = "ros2")]
    pub domain: Option<u16>,
    /// bag, mcap, rosbag2-sqlite3 or rosbag2-mcap (ROS 1: bag by default; ROS 2: mcap). A
    /// rosbag2 recording is the directory OUT (OUT.active while recording), ROS 2 only.
    #[arg(long)]
    pub format: Option<String>,
    /// Compression: none, lz4, bz2 (bag chunks), zstd (mcap chunks; rosbag2-sqlite3: each
    /// message; rosbag2-mcap's chunks are always zstd).
    #[arg(long, default_value = "none")]
    pub compression: String,
    /// Start a new file every this many megabytes (OUT_0.bag, OUT_1.bag, ...; rosbag2: files
    /// of the one directory).
    #[arg(long, value_name = "MB")]
    pub split_size: Option<u64>,
    /// Start a new file every this many seconds.
    #[arg(long, value_name = "S")]
    pub split_duration: Option<f64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// No status line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `bagscope record`.
pub fn run(a: &RecordArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let format = match &a.format {
        Some(f) => Format::parse(f)?,
        None if a.ros2 => Format::Mcap,
        None => Format::Bag,
    };
    let compression = format.compression(&a.compression)?;
    let regex = a
        .regex
        .iter()
        .map(|r| regex::Regex::new(r).map_err(|e| Error::Invalid(format!("--regex {r:?}: {e}"))))
        .collect::<crate::cli::Result<Vec<_>>>()?;
    let select = if a.all {
        Select::All
    } else if !regex.is_empty() {
        Select::Matching(a.topics.clone(), regex)
    } else if !a.topics.is_empty() {
        Select::Topics(a.topics.clone())
    } else {
        return Err(Error::Invalid(
            "say what to record: --topic T, --regex R or --all".into(),
        ));
    };
    let opts = RecordOptions {
        out: a.out.clone(),
        format,
        compression,
        split_size: a.split_size.map(|mb| mb.saturating_mul(1 << 20)),
        split_duration: a.split_duration.map(Duration::from_secs_f64),
        select,
        msg_path: opts.msg_path.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    enum From {
        Ros1(Node),
        Ros2(Participant),
    }
    let from = if a.ros2 {
        let p = Participant::new(ParticipantOptions::from_env(a.domain)?)?;
        eprintln!(
            "bagscope: recording from ROS 2 {} to {}.active",
            p.options().describe(),
            a.out.display()
        );
        From::Ros2(p)
    } else {
        let node = Node::start(NodeOptions::from_env(
            "bagscope_record",
            a.ros1.as_deref().filter(|m| !m.is_empty()),
        ))?;
        eprintln!(
            "bagscope: recording from the ROS 1 master at {} as {} to {}.active",
            node.master_uri(),
            node.name(),
            a.out.display()
        );
        From::Ros1(node)
    };
    let status = !a.quiet && std::io::stderr().is_terminal();
    let started = Instant::now();
    let until = a.duration.map(Duration::from_secs_f64);
    let stop2 = stop.clone();
    let mut on_progress = |s: &record::RecordStats| {
        if until.is_some_and(|d| started.elapsed() >= d) {
            stop2.store(true, Ordering::Relaxed);
        }
        if status {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r {} message(s), {} on {} topic(s), {:.1} s   ",
                s.messages,
                timefmt::bytes(s.bytes),
                s.topics.len(),
                started.elapsed().as_secs_f64()
            );
            let _ = err.flush();
        }
    };
    let stats = match &from {
        From::Ros1(node) => record::record_ros1(node, &opts, &stop, &mut on_progress)?,
        From::Ros2(p) => record::record_ros2(p, &opts, &stop, &mut on_progress)?,
    };
    if status {
        eprintln!();
    }
    for n in &stats.notes {
        eprintln!("bagscope: note: {n}");
    }
    for f in &stats.files {
        println!("{}", f.display());
    }
    eprintln!(
        "bagscope: recorded {} message(s) on {} topic(s)",
        stats.messages,
        stats.topics.len()
    );
    Ok(ExitCode::SUCCESS)
}
