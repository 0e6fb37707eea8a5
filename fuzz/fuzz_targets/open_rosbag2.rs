//! rosbag2 from arbitrary bytes: the input is a metadata.yaml text, a 0 byte, then the bytes
//! of a SQLite storage file. Both are written to a private directory (SQLite reads files), which
//! is opened as a recording: metadata parsing, the storage, one connection's messages, the
//! tables and every message must return, never panic, hang or allocate without bound.
#![no_main]

use bagscope_reader::{Bag, Filter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The single-threaded mode: no read-ahead or check threads per execution; no index cache
    // written for a scanned input.
    let opts = bagscope_reader::OpenOptions::default()
        .with_threads(1)
        .with_index_cache(bagscope_reader::IndexCache::Off);
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let dir = std::env::temp_dir().join(format!("bagscope-fuzz-r2-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let _ = std::fs::write(dir.join("metadata.yaml"), &data[..split]);
    let _ = std::fs::write(dir.join("bag_0.db3"), data.get(split + 1..).unwrap_or(&[]));
    if let Ok(bag) = Bag::open_with(&dir, &opts) {
        // One connection first: a recording opened from its metadata.yaml then keeps that
        // connection's rows as its scan passes them, and its tables only.
        if let Ok(it) = bag.messages(&Filter {
            connections: Some(vec![0]),
            ..Default::default()
        }) {
            for m in it {
                let _ = m;
            }
        }
        let _ = bag.tables();
        if let Ok(it) = bag.messages(&Filter::default()) {
            for m in it {
                let _ = m;
            }
        }
    }
});
