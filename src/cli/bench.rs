//! `bagscope bench BAG`: times the library's operations on one bag and prints JSON, for
//! `scripts/bench/ros1.py`, which runs the peer library beside it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use bagscope_reader::{Bag, Filter};

pub(super) fn best<T>(
    runs: usize,
    mut f: impl FnMut() -> crate::cli::Result<T>,
) -> crate::cli::Result<(f64, T)> {
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
        None => Err(crate::cli::Error::Invalid("no runs".into())),
    }
}

/// Decoding throughput per message type: up to 256 MiB of each type's messages are read into
/// memory first, then each message is decoded into its whole value tree on one thread.
fn decode(path: &Path, runs: usize) -> crate::cli::Result<serde_json::Value> {
    use bagscope_reader::encoding::Plan;
    let bag = Bag::open(path)?;
    let s = bag.summary();
    let mut by_type: std::collections::BTreeMap<String, (Plan, Vec<bagscope_reader::Bytes>, u64)> =
        Default::default();
    for m in bag.messages(&Filter::default())? {
        let m = m?;
        let c = &s.connections[m.conn];
        if !by_type.contains_key(&c.datatype) {
            match Plan::for_connection(c, &[]) {
                Ok(p) => {
                    by_type.insert(c.datatype.clone(), (p, Vec::new(), 0));
                }
                Err(_) => continue,
            }
        }
        if let Some(e) = by_type.get_mut(&c.datatype) {
            if e.2 < 256 << 20 && e.1.len() < 2_000_000 {
                e.2 += m.data.len() as u64;
                e.1.push(m.data);
            }
        }
    }
    let mut out = serde_json::Map::new();
    for (t, (plan, msgs, bytes)) in &by_type {
        let (secs, failed) = best(runs, || {
            let mut failed = 0usize;
            for m in msgs {
                match plan.decode(m) {
                    Ok(n) => {
                        std::hint::black_box(&n);
                    }
                    Err(_) => failed += 1,
                }
            }
            Ok(failed)
        })?;
        out.insert(
            t.clone(),
            json!({"messages": msgs.len(), "bytes": bytes, "seconds": secs, "failed": failed,
                   "messages_per_s": msgs.len() as f64 / secs, "mb_per_s": *bytes as f64 / secs / 1e6}),
        );
    }
    Ok(serde_json::Value::Object(out))
}

/// Runs the named operation (`summary`, `tables`, `iterate`, `iterate-tables`, `check`,
/// `decode`, or `all`).
pub fn bench(path: &Path, op: &str, runs: usize) -> crate::cli::Result<ExitCode> {
    let mut out = serde_json::Map::new();
    if let Some(csv) = op.strip_prefix("script:") {
        let v = super::bench_script::script(path, Path::new(csv), runs)?;
        out.insert("script".into(), v);
        println!("{}", serde_json::Value::Object(out));
        return Ok(ExitCode::SUCCESS);
    }
    if op == "video-decode" || op == "video-seek" {
        let bag = Bag::open(path)?;
        let v = if op == "video-decode" {
            super::bench_video::decode(&bag, runs)?
        } else {
            super::bench_video::seek(&bag, runs)?
        };
        out.insert(op.into(), v);
        println!("{}", serde_json::Value::Object(out));
        return Ok(ExitCode::SUCCESS);
    }
    let all = op == "all";
    if all || op == "summary" {
        let (s, n) = best(runs.max(5), || {
            Ok(Bag::open(path)?.quick_summary().message_count)
        })?;
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
    // Every message in time order: as a reader of the whole recording gets them (chunk by
    // chunk where the storage allows, else through the message tables), and through the
    // tables' merge alone (what a time window uses), for comparing the two.
    for (name, filter) in [
        ("iterate", Filter::default()),
        (
            "iterate-tables",
            Filter {
                start_ns: Some(0),
                ..Default::default()
            },
        ),
    ] {
        if !(op == name || (all && name == "iterate")) {
            continue;
        }
        let bag = Bag::open(path)?;
        let unc = bag.uncompressed_size();
        let (s, (n, bytes)) = best(runs, || {
            let (mut n, mut bytes, mut sum) = (0u64, 0u64, 0u64);
            let mut it = bag.messages(&filter)?;
            while let Some(m) = it.next_ref() {
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
            name.into(),
            json!({"seconds": s, "messages": n, "message_bytes": bytes,
                   "decompressed_gb_per_s": unc as f64 / s / 1e9}),
        );
    }
    if all || op == "check" {
        let bag = Bag::open(path)?;
        bag.tables()?;
        let threads = bag.options().threads();
        let (s, r) = best(runs, || {
            Ok(bagscope_reader::check::check(&bag, threads, None)?)
        })?;
        out.insert(
            "check".into(),
            json!({"seconds": s, "messages": r.messages, "problems": r.problems.len(),
                   "decompressed_gb_per_s": r.uncompressed_bytes as f64 / s / 1e9}),
        );
    }
    if all || op == "decompress" {
        // Decompression alone, every chunk on all cores, nothing parsed: the bound that
        // reading everything (`check`) is compared with.
        let bag = Bag::open(path)?;
        let threads = bag.options().threads();
        let (s, bytes) = best(runs, || {
            let total = std::sync::atomic::AtomicU64::new(0);
            bagscope_reader::check::for_each_chunk_parallel(&bag, threads, &|_, d| {
                if let Ok(d) = d {
                    total.fetch_add(d.len() as u64, std::sync::atomic::Ordering::Relaxed);
                }
            });
            Ok(total.into_inner())
        })?;
        out.insert(
            "decompress".into(),
            json!({"seconds": s, "bytes": bytes, "threads": threads,
                   "decompressed_gb_per_s": bytes as f64 / s / 1e9}),
        );
    }
    if op == "decode" {
        out.insert("decode".into(), decode(path, runs)?);
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(ExitCode::SUCCESS)
}
