//! The text `bagscope info` prints and the app's bag info view shows.

use std::fmt::Write as _;

use bagscope_reader::bag::Bag;
use serde_json::json;

use crate::timefmt;
use bagscope_reader::error::{DefErrorKind, Result};

macro_rules! outln {
    ($o:expr, $($t:tt)*) => {{
        let _ = writeln!($o, $($t)*);
    }};
}

/// Measured rate of one topic: (median, min, max) in Hz.
pub fn topic_rates(bag: &Bag, topic: &str) -> Result<Option<(f64, f64, f64)>> {
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

/// What `info` says of a type: its md5sum (ROS 1), or its encoding and where its definition
/// comes from.
pub fn type_note(bag: &Bag, ci: usize) -> String {
    let Some(c) = bag.quick_summary().connections.get(ci) else {
        return String::new();
    };
    if c.encoding == "ros1" && !c.md5sum.is_empty() && c.md5sum != "*" {
        return c.md5sum.clone();
    }
    if c.datatype.is_empty() {
        return "type not recorded: not decodable".into();
    }
    match bag.plan(ci) {
        Ok((_, src)) => format!("{}, definition {src}", c.encoding),
        Err(e) if e.kind == DefErrorKind::NotDecoded => e.reason,
        Err(e) if e.kind == DefErrorKind::Missing => format!(
            "{}, no definition: none stored, none on the search path or shipped",
            c.encoding
        ),
        Err(e) => format!("{}, not decodable: {}", c.encoding, e.reason),
    }
}

/// The REP 2011 hash (`RIHS01_…`) of connection `ci`'s type, computed from its definition as
/// rosbag2 computes it; `None` for a connection that is not ROS 2 (CDR) or whose definition is
/// not at hand, an error for a definition with a type ROS 2 has not.
pub fn type_hash(
    bag: &Bag,
    ci: usize,
) -> Option<std::result::Result<String, bagscope_reader::error::DefError>> {
    let c = bag.quick_summary().connections.get(ci)?;
    if c.encoding != "cdr" {
        return None;
    }
    let (plan, _) = bag.plan(ci).ok()?;
    Some(bagscope_reader::definition::hash::rihs01(&plan.def))
}

/// A warning for each connection whose recorded type hash is not its stored definition's (the
/// definition then is not the one the publisher had; rosbags refuses such a recording).
pub fn type_hash_warnings(bag: &Bag) -> Vec<String> {
    let mut out = Vec::new();
    for (ci, c) in bag.quick_summary().connections.iter().enumerate() {
        if c.type_hash.is_empty() || c.message_definition.trim().is_empty() {
            continue;
        }
        if let Some(Ok(h)) = type_hash(bag, ci) {
            if h != c.type_hash {
                out.push(format!(
                    "{} ({}): the recording states type hash {}, its stored definition hashes to {h}",
                    c.topic, c.datatype, c.type_hash
                ));
            }
        }
    }
    out
}

/// What `bagscope info` prints, warnings included; `freq` measures rates from the tables.
pub fn summary_text(bag: &Bag, freq: bool) -> Result<String> {
    // Rates need every message's time (the tables); the rest is what is known at open.
    let s = if freq {
        bag.summary()
    } else {
        bag.quick_summary()
    };
    let mut out = String::new();
    outln!(out, "path:        {}", s.path.display());
    outln!(
        out,
        "version:     {}{}",
        s.version.as_str(),
        if s.indexed {
            ""
        } else {
            " (not indexed: recovered by a linear scan)"
        }
    );
    if let (Some(a), Some(b)) = (s.start_ns, s.end_ns) {
        outln!(out, "duration:    {}", timefmt::duration(b - a));
        outln!(
            out,
            "start:       {} UTC ({})",
            timefmt::date(a),
            timefmt::secs(a)
        );
        outln!(
            out,
            "end:         {} UTC ({})",
            timefmt::date(b),
            timefmt::secs(b)
        );
    }
    for (k, v) in s.storage_facts.iter().filter(|(_, v)| !v.is_empty()) {
        outln!(out, "{:<12} {v}", format!("{k}:"));
    }
    if s.files.len() > 1 {
        outln!(out, "files:       {} storage files", s.files.len());
    }
    outln!(out, "size:        {}", timefmt::bytes(s.file_size));
    if s.rows_pending {
        // Opened without reading the rows (rosbag2 SQLite): say where the counts come from.
        outln!(
            out,
            "messages:    {} (metadata.yaml's counts; the database's row ids and timestamp index agree)",
            s.message_count
        );
    } else {
        outln!(out, "messages:    {}", s.message_count);
    }
    let comp = bag.compression_counts();
    let total: usize = comp.values().sum();
    if total == 0 && s.version.is_ros1() {
        outln!(
            out,
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
        outln!(out, "{label} {name} [{n}/{total} chunks]");
    }
    let mut types: Vec<(&str, String)> = s
        .connections
        .iter()
        .enumerate()
        .map(|(ci, c)| (c.datatype.as_str(), type_note(bag, ci)))
        .collect();
    types.sort_unstable();
    types.dedup();
    let tw = types.iter().map(|t| t.0.len()).max().unwrap_or(0);
    for (i, (t, note)) in types.iter().enumerate() {
        let label = if i == 0 {
            "types:      "
        } else {
            "            "
        };
        outln!(out, "{label} {t:<tw$} [{note}]");
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
        outln!(out, "{line}");
    }
    let mut qos: Vec<(&str, String)> = Vec::new();
    for t in &s.topics {
        if let Some(c) = t.connections.first().map(|&c| &s.connections[c]) {
            if !c.qos.trim().is_empty() {
                qos.push((
                    &t.name,
                    bagscope_reader::storage::rosbag2::qos_summary(&c.qos),
                ));
            }
        }
    }
    for (i, (t, q)) in qos.iter().enumerate() {
        let label = if i == 0 {
            "qos:        "
        } else {
            "            "
        };
        outln!(out, "{label} {t:<nw$} {q}");
    }
    for (i, (name, media, size)) in s.attachments.iter().enumerate() {
        let label = if i == 0 {
            "attachments:"
        } else {
            "            "
        };
        let size = timefmt::bytes(*size);
        if media.is_empty() {
            outln!(out, "{label} {name} ({size}, no media type)");
        } else {
            outln!(out, "{label} {name} ({media}, {size})");
        }
    }
    for (i, (name, kv)) in s.metadata.iter().enumerate() {
        let label = if i == 0 {
            "metadata:   "
        } else {
            "            "
        };
        let pairs: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut line = pairs.join(", ");
        if line.len() > 120 {
            let mut cut = 117;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push_str("...");
        }
        outln!(out, "{label} {name}: {line}");
    }
    if let Some(line) = diagnostics_line(bag, freq)? {
        outln!(out, "diagnostics: {line}");
    }
    let mut warnings = if freq {
        bag.warnings()
    } else {
        bag.quick_warnings()
    };
    warnings.extend(type_hash_warnings(bag));
    for (i, w) in warnings.iter().enumerate() {
        let label = if i == 0 {
            "warnings:   "
        } else {
            "            "
        };
        outln!(out, "{label} {w}");
    }
    Ok(out)
}

/// The diagnostic statuses per level (`freq`: read them) or the diagnostic topics' message
/// counts; none without diagnostic topics.
fn diagnostics_line(bag: &Bag, freq: bool) -> Result<Option<String>> {
    use crate::reports::diagnostics::{diagnostic_topics, read_diagnostics, DiagLevel};
    let topics = diagnostic_topics(bag);
    if topics.is_empty() {
        return Ok(None);
    }
    let s = bag.summary();
    let names: Vec<&str> = topics.iter().map(|&t| s.topics[t].name.as_str()).collect();
    if !freq {
        let n: u64 = topics.iter().map(|&t| s.topics[t].message_count).sum();
        return Ok(Some(format!(
            "{} ({n} messages; --freq counts the statuses per level)",
            names.join(", ")
        )));
    }
    let d = read_diagnostics(bag, &topics, &std::sync::atomic::AtomicBool::new(false))?;
    let c = d.counts();
    let mut parts: Vec<String> = DiagLevel::ALL
        .iter()
        .map(|l| format!("{} {}", c[l.index()], l.name()))
        .collect();
    if c[4] > 0 {
        parts.push(format!("{} other", c[4]));
    }
    Ok(Some(format!(
        "{}: {} names, statuses {}",
        names.join(", "),
        d.tracks.len(),
        parts.join(", ")
    )))
}

/// The diagnostic statuses per level, for `--json` with `freq`.
fn diagnostics_json(bag: &Bag) -> Result<serde_json::Value> {
    use crate::reports::diagnostics::{diagnostic_topics, read_diagnostics, DiagLevel};
    let topics = diagnostic_topics(bag);
    if topics.is_empty() {
        return Ok(serde_json::Value::Null);
    }
    let d = read_diagnostics(bag, &topics, &std::sync::atomic::AtomicBool::new(false))?;
    let c = d.counts();
    let mut levels = serde_json::Map::new();
    for l in DiagLevel::ALL {
        levels.insert(l.name().to_lowercase(), json!(c[l.index()]));
    }
    levels.insert("other".into(), json!(c[4]));
    Ok(json!({
        "topics": topics.iter().map(|&t| &bag.summary().topics[t].name).collect::<Vec<_>>(),
        "messages": d.messages,
        "names": d.tracks.len(),
        "statuses": levels,
        "per_name": d.tracks.iter().map(|t| {
            let mut o = serde_json::Map::new();
            for l in DiagLevel::ALL {
                if t.counts[l.index()] > 0 {
                    o.insert(l.name().to_lowercase(), json!(t.counts[l.index()]));
                }
            }
            if t.counts[4] > 0 {
                o.insert("other".into(), json!(t.counts[4]));
            }
            (t.name.clone(), json!({"statuses": o, "worst": t.worst().map(|l| l.name())}))
        }).collect::<serde_json::Map<_, _>>(),
    }))
}

/// What `bagscope info --json` prints (and the Python package's `Recording.info()`): the
/// recording, its connections and topics, files, storage facts, attachments, metadata and
/// warnings; with `freq`, each topic's rates (this reads the message tables).
pub fn summary_json(bag: &Bag, freq: bool) -> Result<serde_json::Value> {
    let s = if freq {
        bag.summary()
    } else {
        bag.quick_summary()
    };
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
    let mut warnings = if freq {
        bag.warnings()
    } else {
        bag.quick_warnings()
    };
    warnings.extend(type_hash_warnings(bag));
    let diagnostics = if freq {
        diagnostics_json(bag)?
    } else {
        serde_json::Value::Null
    };
    Ok(json!({
        "diagnostics": diagnostics,
        "path": s.path.display().to_string(),
        "version": s.version.as_str(),
        "indexed": s.indexed,
        "rows_pending": s.rows_pending,
        "size": s.file_size,
        "messages": s.message_count,
        "start_ns": s.start_ns,
        "end_ns": s.end_ns,
        "duration_ns": s.duration_ns(),
        "chunks": s.chunks.iter().filter(|c| c.kind.records_alone()).count(),
        "compression": bag.compression_counts(),
        "connections": s.connections.iter().enumerate().map(|(ci, c)| json!({
            "id": c.id, "topic": c.topic, "type": c.datatype, "md5sum": c.md5sum,
            "callerid": c.callerid, "latching": c.latching, "messages": c.message_count,
            "encoding": c.encoding, "schema_encoding": c.schema_encoding,
            "definition": type_note(bag, ci), "qos": c.qos, "file": c.file,
            "type_hash": c.type_hash,
        })).collect::<Vec<_>>(),
        "files": s.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "storage": s.storage_facts.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "attachments": s.attachments.iter().map(|(n, m, z)| json!({"name": n, "media_type": m, "size": z})).collect::<Vec<_>>(),
        "metadata": s.metadata.iter().map(|(n, kv)| json!({"name": n, "metadata": kv.iter().cloned().collect::<std::collections::BTreeMap<_, _>>()})).collect::<Vec<_>>(),
        "topics": topics,
        "warnings": warnings,
    }))
}
