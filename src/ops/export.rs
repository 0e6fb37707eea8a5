//! Export: the chosen connections within a time range, copied byte for byte (no decode) with
//! their connections and times into a new, fully indexed bag. Exporting a whole recovered bag is
//! the repair `rosbag reindex` does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::bag::{Bag, Filter};
use crate::error::{Error, Result};
use crate::writer::{BagWriter, ConnectionSpec, WriteOptions};

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Which messages (connections, `[start, end)`).
    pub filter: Filter,
    /// Compression and chunk size of the new bag.
    pub write: WriteOptions,
}

/// Progress of an export.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportProgress {
    /// Messages written.
    pub messages: u64,
    /// Messages to write.
    pub total: u64,
    /// Bytes of message data written.
    pub bytes: u64,
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct ExportReport {
    /// The new bag.
    pub path: PathBuf,
    /// Messages written.
    pub messages: u64,
    /// Connections written.
    pub connections: usize,
    /// Size of the new bag.
    pub file_size: u64,
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Exports messages of `bag` to `out`. `progress` is called every few thousand messages;
/// setting `cancel` stops the export and removes the partial file. The bag being read is
/// never written: `out` may not be it.
pub fn export(
    bag: &Bag,
    out: &Path,
    opts: &ExportOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ExportProgress),
) -> Result<ExportReport> {
    let src = &bag.summary().path;
    if same_file(src, out) || src == out {
        return Err(Error::Invalid(format!(
            "{} is the bag being read: export to another file",
            out.display()
        )));
    }
    let s = bag.summary();
    if s.files.iter().any(|f| same_file(f, out)) || (out.starts_with(src) && src.is_dir()) {
        return Err(Error::Invalid(format!(
            "{} is part of the recording being read: export elsewhere",
            out.display()
        )));
    }
    let chosen: Vec<usize> = match &opts.filter.connections {
        Some(c) => c.clone(),
        None => (0..s.connections.len()).collect(),
    };
    if let Some(c) = chosen
        .iter()
        .filter_map(|&i| s.connections.get(i))
        .find(|c| c.encoding != "ros1" && c.message_count > 0)
    {
        return Err(Error::Invalid(format!(
            "export writes ROS 1 bags, which hold ROS 1 messages only; {} is {}-encoded ({} recording). Writing MCAP and rosbag2 is not supported yet; `bagscope csv` reads any encoding bagscope decodes",
            c.topic,
            c.encoding,
            s.version.as_str()
        )));
    }
    let mut w = BagWriter::create(out, opts.write)?;
    let mut map: Vec<Option<u32>> = vec![None; s.connections.len()];
    let iter = bag.messages(&opts.filter)?;
    let mut p = ExportProgress {
        total: iter.total() as u64,
        ..Default::default()
    };
    for m in iter {
        if cancel.load(Ordering::Relaxed) {
            // Dropping the writer removes its temporary file.
            drop(w);
            return Err(Error::Cancelled);
        }
        let m = m?;
        let id = match map[m.conn] {
            Some(id) => id,
            None => {
                let c = &s.connections[m.conn];
                let id = w.add_connection(ConnectionSpec {
                    topic: c.topic.clone(),
                    datatype: c.datatype.clone(),
                    md5sum: c.md5sum.clone(),
                    message_definition: c.message_definition.clone(),
                    callerid: c.callerid.clone(),
                    latching: c.latching,
                });
                map[m.conn] = Some(id);
                id
            }
        };
        w.write(id, m.time_ns, &m.data)?;
        p.messages += 1;
        p.bytes += m.data.len() as u64;
        if p.messages.is_multiple_of(4096) {
            progress(p);
        }
    }
    let path = w.finish()?;
    progress(p);
    Ok(ExportReport {
        file_size: std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
        path,
        messages: p.messages,
        connections: map.iter().filter(|x| x.is_some()).count(),
    })
}
