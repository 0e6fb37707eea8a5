//! `bagscope info` and `bagscope check`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use bagscope::{Bag, Summary};

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
pub fn run(a: &InfoArgs) -> bagscope::Result<ExitCode> {
    let (bags, freq, json) = (a.bags.as_slice(), a.freq, a.json);
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
