//! `bagscope check`: every record and message verified; exit 1 if damaged.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bagscope_ops::timefmt;
use bagscope_reader::check::check as check_bag;
use bagscope_reader::Bag;

/// Read every message of every chunk (all cores), verify every record; exit 1 if damaged.
/// With `--expect RULES.yaml`, check each recording against expectations instead (required
/// topics and types, counts, rates, gaps, alignment, stamp lag, value conditions); exit 1 if
/// one fails.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Recordings to check.
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// Threads to decompress on (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Check against the expectations of a rules file (docs/expectations.md) rather than the
    /// file's integrity.
    #[arg(long, value_name = "RULES.yaml")]
    pub expect: Option<PathBuf>,
    /// With --expect: the reports as JSON on stdout.
    #[arg(long, requires = "expect")]
    pub json: bool,
    /// With --expect: also write the reports as JUnit XML to this file.
    #[arg(long, value_name = "FILE", requires = "expect")]
    pub junit: Option<PathBuf>,
    /// With --expect: list the rules that passed too.
    #[arg(short, long, requires = "expect")]
    pub verbose: bool,
}

/// Runs `bagscope check`.
pub fn run(a: &CheckArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (bags, threads) = (a.bags.as_slice(), a.threads);
    let threads = threads.unwrap_or_else(|| opts.threads());
    if let Some(rules) = &a.expect {
        return crate::cli::expect::run(a, rules, threads, opts);
    }
    let mut damaged = false;
    for p in bags {
        let t0 = std::time::Instant::now();
        let bag = match Bag::open_with(p, opts) {
            Ok(b) => b,
            Err(e) => {
                println!("{}: ERROR: {e}", p.display());
                damaged = true;
                continue;
            }
        };
        let dc = bagscope_reader::check::DecodeCheck::new(bag.summary(), &bag.options().msg_path);
        let hook = |ci: usize, t: u64, d: &[u8]| dc.message(ci, t, d);
        let mut r = check_bag(&bag, threads, Some(&hook))?;
        r.problems.extend(dc.summary_problems(bag.summary()));
        r.problems.extend(
            bagscope_ops::reports::info::type_hash_warnings(&bag)
                .into_iter()
                .map(|w| format!("warning: {w}")),
        );
        let secs = t0.elapsed().as_secs_f64();
        let warnings = bag.warnings();
        let problems: Vec<&String> = r.problems.iter().collect();
        let extra: Vec<String> = warnings
            .iter()
            .filter(|w| !r.problems.iter().any(|p| p.ends_with(w.as_str())))
            .map(|w| format!("warning: {w}"))
            .collect();
        // In ROS 1 bags every warning is recovered damage; rosbag2 and MCAP warnings may only
        // say that metadata.yaml is stale, which loses nothing.
        // A rosbag2 recording without files or messages its metadata.yaml lists has lost them.
        let missing = bag
            .summary()
            .storage_facts
            .iter()
            .any(|(k, _)| k == bagscope_reader::storage::rosbag2::MISSING_FACT);
        let bad = missing
            || if matches!(
                bag.summary().version,
                bagscope_reader::Version::V2_0 | bagscope_reader::Version::V1_2
            ) {
                !problems.is_empty() || !extra.is_empty() || !bag.summary().indexed
            } else {
                problems.iter().any(|p| !p.starts_with("warning:")) || !bag.summary().indexed
            };
        let n_warn = problems.len() + extra.len();
        let status = match (bad, n_warn) {
            (true, _) => "DAMAGED".to_string(),
            (false, 0) => "OK".to_string(),
            (false, n) => format!("OK ({n} warnings)"),
        };
        println!(
            "{}: {} — {} messages ({}) in {} chunks, {} read, {} decompressed, {:.2} s ({}/s)",
            p.display(),
            status,
            r.messages,
            timefmt::bytes(r.message_bytes),
            r.chunks,
            timefmt::bytes(r.compressed_bytes),
            timefmt::bytes(r.uncompressed_bytes),
            secs,
            timefmt::bytes((r.uncompressed_bytes as f64 / secs.max(1e-9)) as u64),
        );
        for pr in problems
            .iter()
            .map(|s| s.as_str())
            .chain(extra.iter().map(String::as_str))
        {
            println!("  {pr}");
        }
        damaged |= bad;
    }
    Ok(if damaged {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
