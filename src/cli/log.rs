//! `bagscope log`: the log messages of a recording.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;

use crate::cli::Error;
use bagscope_ops::timefmt;
use bagscope_reader::Bag;

/// The log messages (/rosout: rosgraph_msgs/Log, rcl_interfaces/msg/Log) of a recording,
/// in time order: `time [LEVEL] node: text (file:line)`.
#[derive(Args, Debug)]
pub struct LogArgs {
    /// The recording.
    pub bag: PathBuf,
    /// Only this severity and above: debug, info, warn, error, fatal.
    #[arg(long)]
    pub level: Option<String>,
    /// Only nodes whose name contains this.
    #[arg(long)]
    pub node: Option<String>,
    /// Only messages whose text contains this (case-insensitive).
    #[arg(long)]
    pub grep: Option<String>,
    /// One JSON object a line.
    #[arg(long)]
    pub json: bool,
}

/// `bagscope log`: the recording's log messages, filtered.
pub fn run(a: &LogArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (path, level, node, grep, json) = (
        a.bag.as_path(),
        a.level.as_deref(),
        a.node.as_deref(),
        a.grep.as_deref(),
        a.json,
    );
    use bagscope_ops::reports::log::{log_topics, read_logs, Level};
    let min = match level {
        Some(l) => Level::parse(l)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown level {l:?} (debug, info, warn, error, fatal)"
                ))
            })?
            .rank(),
        None => 0,
    };
    let grep = grep.map(str::to_lowercase);
    let bag = Bag::open_with(path, opts)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let topics = log_topics(&bag);
    if topics.is_empty() {
        eprintln!(
            "bagscope: {} has no log topic (rosgraph_msgs/Log, rcl_interfaces/msg/Log)",
            path.display()
        );
        return Ok(ExitCode::from(1));
    }
    let s = bag.summary();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut io_err = None;
    let bad = read_logs(&bag, &topics, &AtomicBool::new(false), &mut |lines| {
        for l in lines {
            if l.level.rank() < min
                || node.is_some_and(|n| !l.node.contains(n))
                || grep
                    .as_ref()
                    .is_some_and(|g| !l.msg.to_lowercase().contains(g))
            {
                continue;
            }
            let r = if json {
                let v = serde_json::json!({
                    "time_ns": l.time_ns,
                    "stamp_ns": l.stamp_ns,
                    "topic": s.topics[l.topic].name,
                    "level": l.level.to_string(),
                    "node": l.node,
                    "msg": l.msg,
                    "file": l.file,
                    "function": l.function,
                    "line": l.line,
                });
                writeln!(out, "{v}")
            } else {
                writeln!(
                    out,
                    "{} [{}] {}: {} ({}:{})",
                    timefmt::date(l.time_ns),
                    l.level,
                    l.node,
                    l.msg,
                    l.file,
                    l.line
                )
            };
            if let Err(e) = r {
                io_err = Some(e);
                return false;
            }
        }
        true
    })?;
    if let Some(e) = io_err {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    out.flush().ok();
    if bad > 0 {
        eprintln!("bagscope: {bad} log message(s) could not be decoded");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
