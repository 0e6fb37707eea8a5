//! `bagscope timing`: a topic's rate, gaps and stamp delays.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;

use bagscope_ops::timefmt;
use bagscope_reader::Bag;

/// A topic's timing: mean rate, median period, the gaps longer than a few periods, and
/// `header.stamp` minus the receive time where messages have a header.
#[derive(Args, Debug)]
pub struct TimingArgs {
    /// The recording.
    pub bag: PathBuf,
    /// The topic.
    pub topic: String,
    /// Report gaps longer than this many median periods.
    #[arg(long, default_value_t = 3.0)]
    pub gap_factor: f64,
    /// Gaps listed at most.
    #[arg(long, default_value_t = 20)]
    pub max_gaps: usize,
}

/// `bagscope timing`: a topic's rate, median period, long gaps and stamp delays.
pub fn run(a: &TimingArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (path, topic, factor, max_gaps) =
        (a.bag.as_path(), a.topic.as_str(), a.gap_factor, a.max_gaps);
    use bagscope_ops::reports::timing::{gaps, median_period, stamp_delays, topic_times};
    use std::fmt::Write as _;
    let bag = Bag::open_with(path, opts)?;
    let s = bag.summary();
    let start = s.start_ns.unwrap_or(0);
    let times = topic_times(&bag, topic)?;
    let dur = s.duration_ns() as f64 / 1e9;
    let mut o = String::new();
    let _ = writeln!(o, "topic:          {topic}");
    let _ = writeln!(o, "messages:       {}", times.len());
    if dur > 0.0 {
        let _ = writeln!(
            o,
            "mean rate:      {:.3} Hz (count / recording duration)",
            times.len() as f64 / dur
        );
    }
    let _ = match median_period(&times) {
        Some(m) => writeln!(
            o,
            "median period:  {} ({:.3} Hz)",
            timefmt::period(m),
            1e9 / m as f64
        ),
        None => writeln!(o, "median period:  -"),
    };
    let g = gaps(&times, factor);
    let _ = writeln!(o, "gaps > {factor}× median: {}", g.len());
    for x in g.iter().take(max_gaps) {
        let _ = writeln!(
            o,
            "  +{:.3}s  {}",
            x.start_ns.saturating_sub(start) as f64 / 1e9,
            timefmt::period(x.len_ns)
        );
    }
    let _ = match stamp_delays(&bag, topic, &AtomicBool::new(false)) {
        Ok(d) if !d.is_empty() => {
            let mut v: Vec<i64> = d.iter().map(|x| x.1).collect();
            v.sort_unstable();
            let ms = |x: i64| x as f64 / 1e6;
            writeln!(
                o,
                "stamp - receive time: min {:.3} ms, median {:.3} ms, max {:.3} ms ({} messages)",
                ms(v[0]),
                ms(v[v.len() / 2]),
                ms(v[v.len() - 1]),
                v.len()
            )
        }
        Ok(_) => writeln!(o, "stamp - receive time: no message read"),
        Err(e) => writeln!(o, "stamp - receive time: {e}"),
    };
    match std::io::stdout().lock().write_all(o.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}
