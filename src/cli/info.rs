//! `bagscope info` and `bagscope check`.

use std::path::PathBuf;
use std::process::ExitCode;

use bagscope::ops::check::check as check_bag;
use bagscope::timefmt;
use bagscope::{Bag, Summary};
use serde_json::json;

fn to_json(s: &Summary, bag: &Bag, freq: bool) -> bagscope::Result<serde_json::Value> {
    let mut topics = Vec::new();
    for t in &s.topics {
        let c0 = &s.connections[t.connections[0]];
        let mut o = json!({
            "name": t.name,
            "type": t.datatype,
            "md5sum": c0.md5sum,
            "messages": t.message_count,
            "connections": t.connections.len(),
        });
        if freq {
            o["frequency_hz"] = match bagscope::ops::info::topic_rates(bag, &t.name)? {
                Some((med, lo, hi)) => json!({"median": med, "min": lo, "max": hi}),
                None => serde_json::Value::Null,
            };
        }
        topics.push(o);
    }
    Ok(json!({
        "path": s.path.display().to_string(),
        "version": s.version.as_str(),
        "indexed": s.indexed,
        "rows_pending": s.rows_pending,
        "size": s.file_size,
        "messages": s.message_count,
        "start_ns": s.start_ns,
        "end_ns": s.end_ns,
        "duration_ns": s.duration_ns(),
        "chunks": s.chunks.iter().filter(|c| matches!(c.kind, bagscope::ChunkKind::Ros1 | bagscope::ChunkKind::Mcap)).count(),
        "compression": bag.compression_counts(),
        "connections": s.connections.iter().enumerate().map(|(ci, c)| json!({
            "id": c.id, "topic": c.topic, "type": c.datatype, "md5sum": c.md5sum,
            "callerid": c.callerid, "latching": c.latching, "messages": c.message_count,
            "encoding": c.encoding, "schema_encoding": c.schema_encoding,
            "definition": bagscope::ops::info::type_note(bag, ci), "qos": c.qos, "file": c.file,
        })).collect::<Vec<_>>(),
        "files": s.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "storage": s.storage_facts.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "attachments": s.attachments.iter().map(|(n, m, z)| json!({"name": n, "media_type": m, "size": z})).collect::<Vec<_>>(),
        "metadata": s.metadata.iter().map(|(n, kv)| json!({"name": n, "metadata": kv.iter().cloned().collect::<std::collections::BTreeMap<_, _>>()})).collect::<Vec<_>>(),
        "topics": topics,
        "warnings": if freq { bag.warnings() } else { bag.quick_warnings() },
    }))
}

/// `bagscope info`.
pub fn info(bags: &[PathBuf], freq: bool, json: bool) -> bagscope::Result<ExitCode> {
    let mut code = ExitCode::SUCCESS;
    for (i, p) in bags.iter().enumerate() {
        match Bag::open(p) {
            Ok(bag) => {
                if freq {
                    bag.tables()?;
                }
                let s = if freq {
                    bag.summary()
                } else {
                    bag.quick_summary()
                };
                if json {
                    println!("{}", to_json(s, &bag, freq)?);
                } else {
                    if i > 0 {
                        println!();
                    }
                    print!("{}", bagscope::ops::info::summary_text(&bag, freq)?);
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

/// `bagscope check`.
pub fn check(bags: &[PathBuf], threads: Option<usize>) -> bagscope::Result<ExitCode> {
    let threads = threads.unwrap_or_else(bagscope::settings::default_threads);
    let mut damaged = false;
    for p in bags {
        let t0 = std::time::Instant::now();
        let bag = match Bag::open(p) {
            Ok(b) => b,
            Err(e) => {
                println!("{}: ERROR: {e}", p.display());
                damaged = true;
                continue;
            }
        };
        let dc = bagscope::ops::check::DecodeCheck::new(bag.summary());
        let hook = |ci: usize, t: u64, d: &[u8]| dc.message(ci, t, d);
        let mut r = check_bag(&bag, threads, Some(&hook))?;
        r.problems.extend(dc.summary_problems(bag.summary()));
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
            .any(|(k, _)| k == bagscope::storage::rosbag2::MISSING_FACT);
        let bad = missing
            || if matches!(
                bag.summary().version,
                bagscope::Version::V2_0 | bagscope::Version::V1_2
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
