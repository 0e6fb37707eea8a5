//! `bagscope compare`: runs side by side.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli::Error;
use bagscope_ops::reports::compare::{compare, Align};
use bagscope_reader::Bag;

/// Runs side by side: per topic, messages, mean rate, longest gap, first and last time; for
/// each --field, min, mean, max and std; each run against the first (B − A).
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The runs (two or more recordings: ROS 1 bags, MCAP files, rosbag2 directories).
    #[arg(required = true, num_args = 2..)]
    pub bags: Vec<PathBuf>,
    /// Only these topics (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    /// A numeric field to compare (`/imu.linear_acceleration.x`; repeatable).
    #[arg(long = "field", short = 'f')]
    pub fields: Vec<String>,
    /// Each run's time zero: `start` (its first message), a topic (its first message there,
    /// the runs aligned on an event) or `bookmark:LABEL` (each run's bookmark of that label,
    /// kept in the recording).
    #[arg(
        long,
        default_value = "start",
        value_name = "start|TOPIC|bookmark:LABEL"
    )]
    pub align: String,
    /// Each run's time zero as seconds from its start (one per run, in order; a bookmark's
    /// time, say); overrides --align.
    #[arg(long, value_name = "SECONDS", num_args = 1.., value_delimiter = ',')]
    pub at: Vec<f64>,
    /// One JSON object (full precision; `null` where a run has none).
    #[arg(long)]
    pub json: bool,
}

/// Runs `bagscope compare`.
pub fn run(a: &CompareArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let bags: Vec<Bag> = a
        .bags
        .iter()
        .map(|p| Bag::open_with(p, opts))
        .collect::<bagscope_reader::Result<_>>()?;
    let align = if !a.at.is_empty() {
        if a.at.len() != bags.len() {
            return Err(Error::Invalid(format!(
                "--at gives {} times for {} runs",
                a.at.len(),
                bags.len()
            )));
        }
        Align::At(
            bags.iter()
                .zip(&a.at)
                .map(|(b, s)| {
                    let start = b.summary().start_ns.unwrap_or(0) as f64;
                    (start + s * 1e9).max(0.0) as u64
                })
                .collect(),
        )
    } else if a.align == "start" {
        Align::Start
    } else if a.align.starts_with('/') {
        Align::Topic(a.align.clone())
    } else if let Some(label) = a.align.strip_prefix("bookmark:") {
        Align::Bookmark(label.to_string())
    } else {
        return Err(Error::Invalid(format!(
            "--align {:?}: `start`, a topic (/name) or bookmark:LABEL",
            a.align
        )));
    };
    let names: Vec<String> = a.bags.iter().map(|p| p.display().to_string()).collect();
    let refs: Vec<&Bag> = bags.iter().collect();
    let c = compare(&refs, &names, &a.topics, &a.fields, align)?;
    if a.json {
        println!("{}", c.json());
    } else {
        print!("{}", c.text());
    }
    Ok(ExitCode::SUCCESS)
}
