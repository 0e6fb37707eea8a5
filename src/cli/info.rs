//! `bagscope info` and `bagscope check`.

use std::path::PathBuf;
use std::process::ExitCode;

use bagscope::check::check as check_bag;
use bagscope::timefmt;
use bagscope::{Bag, Summary};
use serde_json::json;

/// Measured rate of one topic: (median, min, max) in Hz.
pub fn topic_rates(bag: &Bag, topic: &str) -> bagscope::Result<Option<(f64, f64, f64)>> {
    let tables = bag.tables()?;
    let Some(t) = bag.summary().topic(topic) else {
        return Ok(None);
    };
    let mut times: Vec<u64> = t
        .connections
        .iter()
        .flat_map(|&c| tables.per_connection[c].iter().map(|e| e.time_ns))
        .collect();
    times.sort_unstable();
    let mut dts: Vec<u64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .collect();
    if dts.is_empty() {
        return Ok(None);
    }
    dts.sort_unstable();
    let hz = |d: u64| 1e9 / d as f64;
    Ok(Some((
        hz(dts[dts.len() / 2]),
        hz(dts[dts.len() - 1]),
        hz(dts[0]),
    )))
}

fn print_text(s: &Summary, bag: &Bag, freq: bool) -> bagscope::Result<()> {
    println!("path:        {}", s.path.display());
    println!(
        "version:     {}{}",
        s.version.as_str(),
        if s.indexed {
            ""
        } else {
            " (not indexed: recovered by a linear scan)"
        }
    );
    if let (Some(a), Some(b)) = (s.start_ns, s.end_ns) {
        println!("duration:    {}", timefmt::duration(b - a));
        println!(
            "start:       {} UTC ({})",
            timefmt::date(a),
            timefmt::secs(a)
        );
        println!(
            "end:         {} UTC ({})",
            timefmt::date(b),
            timefmt::secs(b)
        );
    }
    println!("size:        {}", timefmt::bytes(s.file_size));
    println!("messages:    {}", s.message_count);
    let comp = s.compression_counts();
    let total: usize = comp.values().sum();
    if total == 0 {
        println!(
            "compression: none (format {} has no chunks)",
            s.version.as_str()
        );
    }
    for (i, (name, n)) in comp.iter().enumerate() {
        let label = if i == 0 {
            "compression:"
        } else {
            "            "
        };
        println!("{label} {name} [{n}/{total} chunks]");
    }
    let mut types: Vec<(&str, &str)> = s
        .connections
        .iter()
        .map(|c| (c.datatype.as_str(), c.md5sum.as_str()))
        .collect();
    types.sort_unstable();
    types.dedup();
    let tw = types.iter().map(|t| t.0.len()).max().unwrap_or(0);
    for (i, (t, md5)) in types.iter().enumerate() {
        let label = if i == 0 {
            "types:      "
        } else {
            "            "
        };
        println!("{label} {t:<tw$} [{md5}]");
    }
    let nw = s.topics.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let cw = s
        .topics
        .iter()
        .map(|t| t.message_count.to_string().len())
        .max()
        .unwrap_or(0);
    let dur = s.duration_ns() as f64 / 1e9;
    for (i, t) in s.topics.iter().enumerate() {
        let label = if i == 0 {
            "topics:     "
        } else {
            "            "
        };
        let mut line = format!("{label} {:<nw$} {:>cw$} msgs", t.name, t.message_count);
        if freq {
            match topic_rates(bag, &t.name)? {
                Some((med, lo, hi)) => {
                    line.push_str(&format!(" @ {med:>8.2} Hz (min {lo:.2}, max {hi:.2})"))
                }
                None => line.push_str("                 "),
            }
        } else if dur > 0.0 && t.message_count > 1 {
            line.push_str(&format!(
                " @ {:>8.2} Hz",
                (t.message_count - 1) as f64 / dur
            ));
        }
        line.push_str(&format!(" : {}", t.datatype));
        if t.connections.len() > 1 {
            line.push_str(&format!(" ({} connections)", t.connections.len()));
        }
        println!("{line}");
    }
    let warnings = bag.warnings();
    for (i, w) in warnings.iter().enumerate() {
        let label = if i == 0 {
            "warnings:   "
        } else {
            "            "
        };
        println!("{label} {w}");
    }
    Ok(())
}

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
            o["frequency_hz"] = match topic_rates(bag, &t.name)? {
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
        "size": s.file_size,
        "messages": s.message_count,
        "start_ns": s.start_ns,
        "end_ns": s.end_ns,
        "duration_ns": s.duration_ns(),
        "chunks": s.chunks.iter().filter(|c| !c.raw).count(),
        "compression": s.compression_counts(),
        "connections": s.connections.iter().map(|c| json!({
            "id": c.id, "topic": c.topic, "type": c.datatype, "md5sum": c.md5sum,
            "callerid": c.callerid, "latching": c.latching, "messages": c.message_count,
        })).collect::<Vec<_>>(),
        "topics": topics,
        "warnings": bag.warnings(),
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
                let s = bag.summary();
                if json {
                    println!("{}", to_json(s, &bag, freq)?);
                } else {
                    if i > 0 {
                        println!();
                    }
                    print_text(s, &bag, freq)?;
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
    let threads = threads.unwrap_or_else(bagscope::iter::default_threads);
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
        let dc = bagscope::check::DecodeCheck::new(bag.summary());
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
        let bad = !problems.is_empty() || !extra.is_empty() || !bag.summary().indexed;
        println!(
            "{}: {} — {} messages ({}) in {} chunks, {} read, {} decompressed, {:.2} s ({}/s)",
            p.display(),
            if bad { "DAMAGED" } else { "OK" },
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
