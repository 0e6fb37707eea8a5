//! The three stages of an export on their own threads, each a batch behind the one before:
//! reading and merging the inputs by time, converting and naming connections, writing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bagscope_reader::bag::Bag;
use bagscope_reader::error::{ConvertError, Error, Result};

use super::sink::{Cmd, ConvertOutcome, Sink};
use super::{output_connection, ExportProgress, Transform};

/// One converted message: the batch's buffer it lies in and where, or why it did not convert;
/// `None` for a message that is not converted at all.
pub(super) type Converted = Option<std::result::Result<(Arc<Vec<u8>>, usize, usize), ConvertError>>;

/// Converts the messages of a batch that have a transform, on `threads` threads. The converted
/// bytes of each thread's share go into one buffer (not one allocation per message).
pub(super) fn convert_batch(
    batch: &[(usize, bagscope_reader::Message)],
    convert: &[Vec<Option<Transform>>],
    threads: usize,
) -> Vec<Converted> {
    let part = |part: &[(usize, bagscope_reader::Message)]| -> Vec<Converted> {
        let mut buf: Vec<u8> = Vec::new();
        let spans: Vec<Option<std::result::Result<(usize, usize), ConvertError>>> = part
            .iter()
            .map(|(k, m)| {
                let t = convert[*k][m.conn].as_ref()?;
                let a = buf.len();
                let r = match t {
                    Transform::ToRos2(t) => t.convert_into(&m.data, &mut buf),
                    Transform::ToRos1(t) => t.convert(&m.data).map(|v| buf.extend_from_slice(&v)),
                    Transform::Migrate(t) => t.convert(&m.data).map(|v| buf.extend_from_slice(&v)),
                };
                Some(r.map(|()| (a, buf.len())))
            })
            .collect();
        let buf = Arc::new(buf);
        spans
            .into_iter()
            .map(|s| s.map(|r| r.map(|(a, b)| (Arc::clone(&buf), a, b))))
            .collect()
    };
    if threads <= 1 || batch.len() < 256 {
        return part(batch);
    }
    let per = batch.len().div_ceil(threads);
    std::thread::scope(|sc| {
        let handles: Vec<_> = batch
            .chunks(per)
            .map(|p| (p.len(), sc.spawn(move || part(p))))
            .collect();
        // One result per message, whatever happens to a thread: nothing is dropped silently.
        handles
            .into_iter()
            .flat_map(|(n, h)| {
                h.join().unwrap_or_else(|_| {
                    (0..n)
                        .map(|_| Some(Err(ConvertError::new("a converting thread panicked"))))
                        .collect()
                })
            })
            .collect()
    })
}

/// The last stage: adds connections and writes messages as the converter says.
pub(super) fn write_stage(
    mut sink: Sink,
    rx: std::sync::mpsc::Receiver<Vec<Cmd>>,
    msg_path: &[std::path::PathBuf],
) -> Result<Sink> {
    let mut ids: Vec<u32> = Vec::new();
    for cmds in rx {
        for c in cmds {
            match c {
                Cmd::Add(c) => ids.push(sink.add(&c, msg_path)?),
                Cmd::Write(local, m, seq) => {
                    let id = ids.get(local as usize).copied().ok_or_else(|| {
                        Error::Invalid(format!("export: no connection {local} added"))
                    })?;
                    sink.write(id, &m, seq)?;
                }
            }
        }
    }
    Ok(sink)
}

/// The middle stage: converts each batch (on `threads` threads), names each input
/// connection's output connection once (`map`), and hands the writer its commands.
#[allow(clippy::too_many_arguments)]
pub(super) fn convert_stage(
    bags: &[Bag],
    convert: &[Vec<Option<Transform>>],
    map: &mut [Vec<Option<u32>>],
    threads: usize,
    shared: bool,
    read_total: u64,
    brx: std::sync::mpsc::Receiver<Vec<(usize, bagscope_reader::Message)>>,
    tx: std::sync::mpsc::SyncSender<Vec<Cmd>>,
) -> ConvertOutcome {
    let mut p = ExportProgress {
        total: read_total,
        ..Default::default()
    };
    let mut written_conns = 0usize;
    // Per (input, connection): messages not converted, the first one's time and error.
    let mut unconverted: std::collections::BTreeMap<(usize, usize), (u64, u64, ConvertError)> =
        Default::default();
    let mut by_topic: std::collections::HashMap<(String, String, String), u32> =
        std::collections::HashMap::new();
    let mut local_ids = 0u32;
    for batch in brx {
        let converted = convert_batch(&batch, convert, threads);
        let mut cmds: Vec<Cmd> = Vec::with_capacity(batch.len() + 1);
        for ((k, m), cv) in batch.into_iter().zip(converted) {
            let conv = convert[k][m.conn].as_ref();
            let id = match map[k][m.conn] {
                Some(id) => id,
                None => {
                    let orig = &bags[k].summary().connections[m.conn];
                    let c = output_connection(orig, conv);
                    let key = (c.topic.clone(), c.datatype.clone(), c.encoding.clone());
                    let id = match by_topic.get(&key) {
                        Some(&id) if shared => id,
                        _ => {
                            written_conns += 1;
                            cmds.push(Cmd::Add(Box::new(c)));
                            let id = local_ids;
                            local_ids += 1;
                            by_topic.insert(key, id);
                            id
                        }
                    };
                    map[k][m.conn] = Some(id);
                    id
                }
            };
            match cv {
                Some(Ok((buf, a, b))) => {
                    let n = m.data.len();
                    let cm = bagscope_reader::Message {
                        data: bagscope_reader::Bytes::slice(buf, a, b),
                        ..m
                    };
                    cmds.push(Cmd::Write(id, cm, p.messages as u32));
                    p.messages += 1;
                    p.bytes += n as u64;
                    continue;
                }
                // A message that does not convert is left out and counted; the rest goes on.
                Some(Err(e)) => {
                    let f = unconverted.entry((k, m.conn)).or_insert((0, m.time_ns, e));
                    f.0 += 1;
                    continue;
                }
                None => {}
            }
            p.messages += 1;
            p.bytes += m.data.len() as u64;
            cmds.push(Cmd::Write(id, m, (p.messages - 1) as u32));
        }
        if tx.send(cmds).is_err() {
            // The writer stopped on an error: it says which.
            break;
        }
    }
    drop(tx);
    (p, written_conns, unconverted)
}

/// Reads and merges the inputs by time, converts and names connections, and writes, as three
/// stages on their own threads; `None` when cancelled (nothing is left behind).
pub(super) fn run_stages(
    bags: &[Bag],
    mut iters: Vec<bagscope_reader::bag::iter::Messages>,
    sink: Sink,
    convert: &[Vec<Option<Transform>>],
    total: u64,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ExportProgress),
) -> Result<Option<(Sink, ConvertOutcome)>> {
    let mut map: Vec<Vec<Option<u32>>> = bags
        .iter()
        .map(|b| vec![None; b.summary().connections.len()])
        .collect();
    // Merge by time; ties keep the order of the inputs.
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut heads: Vec<Option<bagscope_reader::Message>> = Vec::with_capacity(iters.len());
    for (k, it) in iters.iter_mut().enumerate() {
        let m = it.next().transpose()?;
        if let Some(m) = &m {
            heap.push(Reverse((m.time_ns, k)));
        }
        heads.push(m);
    }
    // MCAP and rosbag2 name a topic once: connections of split files (or of several inputs)
    // with the same topic, type and encoding share one channel / topic.
    // Three stages on their own threads, each a batch behind the one before: this one reads
    // and merges, the next converts (--to-ros2, --to-ros1, --migrate; on all cores) and names
    // connections, the last writes (compresses, inserts). Bounded channels keep memory flat.
    let batch_max = 8192;
    let threads = bags.first().map_or(1, |b| b.options().threads()).max(1);
    let msg_path = bags
        .first()
        .map(|b| b.options().msg_path.clone())
        .unwrap_or_default();
    let shared = !matches!(sink, Sink::Bag(_));
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Cmd>>(2);
    let (btx, brx) = std::sync::mpsc::sync_channel::<Vec<(usize, bagscope_reader::Message)>>(2);
    let read_total = total;
    std::thread::scope(|sc| -> Result<Option<(Sink, ConvertOutcome)>> {
        let writer = sc.spawn(move || write_stage(sink, rx, &msg_path));
        let converter = sc.spawn(move || {
            convert_stage(
                bags, convert, &mut map, threads, shared, read_total, brx, tx,
            )
        });
        let finish = |btx: std::sync::mpsc::SyncSender<Vec<(usize, bagscope_reader::Message)>>|
         -> Result<(Sink, ConvertOutcome)> {
            drop(btx);
            let done = converter
                .join()
                .map_err(|_| Error::ThreadPanicked("the export converting thread"))?;
            let sink = writer.join().unwrap_or_else(|_| {
                Err(Error::ThreadPanicked("the export writer thread"))
            })?;
            Ok((sink, done))
        };
        let mut read = ExportProgress {
            total,
            ..Default::default()
        };
        loop {
            if cancel.load(Ordering::Relaxed) {
                // Dropping the writer removes its temporary output.
                drop(finish(btx));
                return Ok(None);
            }
            let mut batch: Vec<(usize, bagscope_reader::Message)> = Vec::with_capacity(batch_max);
            while batch.len() < batch_max {
                let Some(Reverse((_, k))) = heap.pop() else {
                    break;
                };
                let Some(m) = heads[k].take() else { continue };
                batch.push((k, m));
                if heap.is_empty() {
                    // The last input with messages left (or the only one): nothing to merge.
                    let mut ended = false;
                    while batch.len() < batch_max {
                        match iters[k].next().transpose()? {
                            Some(m) => batch.push((k, m)),
                            None => {
                                ended = true;
                                break;
                            }
                        }
                    }
                    if ended {
                        continue;
                    }
                }
                if let Some(next) = iters[k].next().transpose()? {
                    heap.push(Reverse((next.time_ns, k)));
                    heads[k] = Some(next);
                }
            }
            if batch.is_empty() {
                break;
            }
            read.messages += batch.len() as u64;
            read.bytes += batch.iter().map(|(_, m)| m.data.len() as u64).sum::<u64>();
            progress(read);
            if btx.send(batch).is_err() {
                // A later stage stopped on an error: it says which.
                break;
            }
        }
        finish(btx).map(Some)
    })
}
