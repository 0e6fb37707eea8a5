//! `bagscope bench BAG`: times the library's operations on one bag and prints JSON, for
//! `scripts/bench.py`, which runs the peer library beside it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use bagscope::{Bag, Filter};
use serde_json::json;

fn best<T>(runs: usize, mut f: impl FnMut() -> bagscope::Result<T>) -> bagscope::Result<(f64, T)> {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        let r = f()?;
        best = best.min(t0.elapsed().as_secs_f64());
        out = Some(r);
    }
    match out {
        Some(o) => Ok((best, o)),
        None => Err(bagscope::Error::Invalid("no runs".into())),
    }
}

/// Runs the named operation (`summary`, `tables`, `iterate`, `check`, or `all`).
pub fn bench(path: &Path, op: &str, runs: usize) -> bagscope::Result<ExitCode> {
    let mut out = serde_json::Map::new();
    let all = op == "all";
    if all || op == "summary" {
        let (s, n) = best(runs.max(5), || Ok(Bag::open(path)?.summary().message_count))?;
        out.insert("summary".into(), json!({"seconds": s, "messages": n}));
    }
    if all || op == "tables" {
        let (s, (n, bytes)) = best(runs, || {
            let b = Bag::open(path)?;
            let t = b.tables()?;
            Ok((t.len(), t.heap_bytes()))
        })?;
        out.insert(
            "tables".into(),
            json!({"seconds": s, "messages": n, "bytes_per_message": bytes as f64 / n.max(1) as f64}),
        );
    }
    if all || op == "iterate" {
        let bag = Bag::open(path)?;
        bag.tables()?;
        let unc = bag.summary().uncompressed_size();
        let (s, (n, bytes)) = best(runs, || {
            let (mut n, mut bytes, mut sum) = (0u64, 0u64, 0u64);
            for m in bag.messages(&Filter::default())? {
                let m = m?;
                n += 1;
                bytes += m.data.len() as u64;
                sum = sum.wrapping_add(
                    m.data
                        .iter()
                        .step_by(4096)
                        .map(|&b| u64::from(b))
                        .sum::<u64>(),
                );
            }
            std::hint::black_box(sum);
            Ok((n, bytes))
        })?;
        out.insert(
            "iterate".into(),
            json!({"seconds": s, "messages": n, "message_bytes": bytes,
                   "decompressed_gb_per_s": unc as f64 / s / 1e9}),
        );
    }
    if all || op == "check" {
        let bag = Bag::open(path)?;
        bag.tables()?;
        let threads = bagscope::iter::default_threads();
        let (s, r) = best(runs, || bagscope::check::check(&bag, threads, None))?;
        out.insert(
            "check".into(),
            json!({"seconds": s, "messages": r.messages, "problems": r.problems.len(),
                   "decompressed_gb_per_s": r.uncompressed_bytes as f64 / s / 1e9}),
        );
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(ExitCode::SUCCESS)
}
