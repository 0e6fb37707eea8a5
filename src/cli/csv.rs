//! `bagscope csv`: series of expressions as CSV, rows at the union of their times.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;

use crate::cli::Error;
use bagscope_ops::tables::csv::{write_csv_columns, AtomicFile, Column};
use bagscope_reader::Bag;

use super::args::{time_range, ExprEnv, Range};

/// Series as CSV: time_ns and one column per expression: a path (/topic.field.sub[3].x), with
/// modifiers (/imu.angular_velocity.z.@derivative.@movavg(0.5s)), or a formula
/// (NAME=/run1/odom.twist.twist.linear.x - /run2/odom.twist.twist.linear.x), or a series a
/// script makes (--script, --lua, a layout's custom series). See docs/expressions.md and
/// docs/scripts.md.
#[derive(Args, Debug)]
pub struct CsvArgs {
    /// The recording (ROS 1 bag, MCAP file, rosbag2 directory or file).
    pub bag: PathBuf,
    /// Expressions or script series, one a column (NAME=EXPRESSION heads it NAME). With
    /// scripts or a layout and none given: every series they make or plot.
    #[arg(required_unless_present_any = ["scripts", "lua", "layout"])]
    pub paths: Vec<String>,
    /// A series script: a Lua file (its header names the series and its sources) or a
    /// PlotJuggler layout or snippet file (its Lua custom functions). Repeatable.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
    /// An inline series script, NAME(SOURCE, ...) = BODY, the body of a PlotJuggler function
    /// (time, value, v1, ...): 'kmh(/odom.twist.twist.linear.x) = return value * 3.6'.
    /// Repeatable.
    #[arg(long = "lua", value_name = "NAME(SOURCES)=BODY")]
    pub lua: Vec<String>,
    /// Write what a layout plots (a PlotJuggler, Lichtblick/Foxglove or bagscope layout): its
    /// paths and custom series, PlotJuggler's Lua snippets run, as columns named as in it.
    #[arg(long, value_name = "FILE")]
    pub layout: Option<PathBuf>,
    #[command(flatten)]
    pub env: ExprEnv,
    /// Write here (atomically) instead of to standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The rows' time: `receive` (when the recorder got each message: `time_ns`) or `header`
    /// (each message's `header.stamp`: `stamp_ns`; each column of one topic; messages without
    /// a header left out and said).
    #[arg(long, value_enum, default_value = "receive")]
    pub time: TimeBase,
    #[command(flatten)]
    pub range: Range,
}

/// Which time a CSV's rows are at.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimeBase {
    /// The receive (log) time.
    #[default]
    Receive,
    /// The message's `header.stamp`.
    Header,
}

/// `bagscope csv`: field series as CSV, rows at the union of their times.
pub fn run(a: &CsvArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (bag_path, paths, out) = (a.bag.as_path(), a.paths.as_slice(), a.output.as_ref());
    let (start, end) = a.range.as_strs();
    // The expressions first: a typo is answered before a recording is opened.
    let env = a.env.env()?;
    if !a.scripts.is_empty() || !a.lua.is_empty() || a.layout.is_some() {
        if a.time == TimeBase::Header {
            return Err(Error::Invalid(
                "--time header is for paths and expressions, not with --script, --lua or --layout"
                    .into(),
            ));
        }
        return super::scripts::csv(a, env, opts);
    }
    let parsed = paths
        .iter()
        .map(|p| Column::parse(p).map_err(Error::from))
        .collect::<crate::cli::Result<Vec<_>>>()?;
    let bag = Bag::open_with(bag_path, opts)?;
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let cancel = AtomicBool::new(false);
    let mut warned = 0u64;
    let mut warn = |w: String| {
        warned += 1;
        eprintln!("bagscope: warning: {w}");
    };
    let opts = bagscope_ops::tables::csv::CsvOptions {
        start_ns,
        end_ns,
        time: bagscope_ops::tables::csv::TimeColumn::EpochNs,
        header_stamps: a.time == TimeBase::Header,
    };
    to_output(out, bag_path, &mut |sink| {
        write_csv_columns(&bag, &parsed, &env, opts, &cancel, sink, &mut warn)
            .map(|_| ())
            .map_err(Into::into)
    })?;
    // Every row that could be read is written; values that could not are reported above.
    if warned > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `write` into `out` (written atomically) or standard output (`-o -` too); a closed pipe
/// on standard output (`| head`) ends it quietly.
pub(super) fn to_output(
    out: Option<&PathBuf>,
    bag_path: &std::path::Path,
    write: &mut dyn FnMut(&mut dyn std::io::Write) -> crate::cli::Result<()>,
) -> crate::cli::Result<()> {
    match out.filter(|o| o.as_os_str() != "-") {
        Some(o) => {
            // An output that does not exist yet is not the bag (nor is any output of a
            // recording that is not a local file: both unresolved compared equal).
            let existing = std::fs::canonicalize(o).ok();
            if existing.is_some() && existing == std::fs::canonicalize(bag_path).ok() {
                return Err(Error::Invalid(format!(
                    "{} is the bag being read; choose another output",
                    o.display()
                )));
            }
            let mut f = AtomicFile::create(o)?;
            write(&mut f)?;
            f.commit()?;
        }
        None => {
            let mut so = std::io::BufWriter::new(std::io::stdout().lock());
            match write(&mut so) {
                Err(e) if e.is_broken_pipe() => {}
                r => r?,
            }
        }
    }
    Ok(())
}
