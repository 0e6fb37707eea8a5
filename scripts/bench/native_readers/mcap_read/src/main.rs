//! The native MCAP reader of `scripts/bench/native.py`: foxglove's `mcap` crate (0.26), its
//! summary read, then every message (or one topic in a window) in log-time order through its
//! indexed reader. Each message is lent by the reader and looked at as `bagscope bench --op
//! iterate` looks at the one `Messages::next_ref` lends: its length counted and every 4096th
//! byte summed. Prints "messages bytes sum".
//!
//!     mcap_read FILE [TOPIC START_OFFSET_S END_OFFSET_S]
use std::io::{Read, Seek, SeekFrom};

use mcap::sans_io::indexed_reader::{IndexedReadEvent, IndexedReader, IndexedReaderOptions};
use mcap::sans_io::summary_reader::{SummaryReadEvent, SummaryReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 && args.len() != 5 {
        eprintln!("usage: mcap_read FILE [TOPIC START_OFFSET_S END_OFFSET_S]");
        std::process::exit(2);
    }
    let mut file = std::fs::File::open(&args[1])?;
    let summary = {
        let mut reader = SummaryReader::new();
        while let Some(event) = reader.next_event() {
            match event? {
                SummaryReadEvent::ReadRequest(need) => {
                    let n = file.read(reader.insert(need))?;
                    reader.notify_read(n);
                }
                SummaryReadEvent::SeekRequest(to) => {
                    reader.notify_seeked(file.seek(to)?);
                }
            }
        }
        reader.finish().ok_or("no summary")?
    };
    let mut opts = IndexedReaderOptions::new();
    if args.len() == 5 {
        let t0 = summary
            .stats
            .as_ref()
            .map(|s| s.message_start_time)
            .ok_or("no statistics")?;
        let s: f64 = args[3].parse()?;
        let e: f64 = args[4].parse()?;
        opts = opts
            .include_topics([args[2].clone()])
            .starting_at(t0 + (s * 1e9) as u64)
            .ending_before(t0 + (e * 1e9) as u64);
    }
    let mut reader = IndexedReader::new_with_options(&summary, opts)?;
    let mut buf = Vec::new();
    let (mut n, mut bytes, mut sum) = (0u64, 0u64, 0u64);
    while let Some(event) = reader.next_event() {
        match event? {
            IndexedReadEvent::ReadChunkRequest { offset, length } => {
                file.seek(SeekFrom::Start(offset))?;
                buf.resize(length, 0);
                file.read_exact(&mut buf)?;
                reader.insert_chunk_record_data(offset, &buf)?;
            }
            IndexedReadEvent::Message { data, .. } => {
                n += 1;
                bytes += data.len() as u64;
                sum = sum.wrapping_add(
                    data.iter()
                        .step_by(4096)
                        .map(|&b| u64::from(b))
                        .sum::<u64>(),
                );
            }
        }
    }
    println!("{n} {bytes} {sum}");
    Ok(())
}
