//! `bagscope info` and `bagscope check`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use serde_json::json;

/// Summarise a recording like `rosbag info`: topics, types, counts, times, compression and
/// where each definition came from; reads only the index or summary where there is one.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Recordings to summarise (ROS 1 bags, MCAP files, rosbag2 directories or files).
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// Also build the message tables and measure each topic's rate.
    #[arg(long)]
    pub freq: bool,
    /// One JSON object per bag, on one line each.
    #[arg(long)]
    pub json: bool,
}

/// Runs `bagscope info`.
pub fn run(a: &InfoArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (bags, freq, json) = (a.bags.as_slice(), a.freq, a.json);
    let mut code = ExitCode::SUCCESS;
    for (i, p) in bags.iter().enumerate() {
        match super::scripts::open(p, &[], opts) {
            Ok(bag) => {
                if freq {
                    bag.tables()?;
                }
                if json {
                    println!("{}", bagscope_ops::reports::info::summary_json(&bag, freq)?);
                } else {
                    if i > 0 {
                        println!();
                    }
                    if bagscope_ops::media::video::mp4_read::is_mp4(p) {
                        println!(
                            "MP4 file:    {} (its video tracks, as a recording:)",
                            p.display()
                        );
                    }
                    print!("{}", bagscope_ops::reports::info::summary_text(&bag, freq)?);
                }
            }
            Err(e) => {
                if json {
                    println!(
                        "{}",
                        json!({"path": p.display().to_string(), "error": e.to_string()})
                    );
                } else {
                    eprintln!("bagscope: {}: {e}", p.display());
                }
                code = ExitCode::from(1);
            }
        }
    }
    Ok(code)
}
