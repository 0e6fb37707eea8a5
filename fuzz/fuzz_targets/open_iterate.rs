//! Open arbitrary bytes as a bag, then read every message in time order and check every chunk:
//! any panic, hang or runaway allocation is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The single-threaded mode: no read-ahead or check threads per execution; no index cache
    // written for a scanned input.
    let opts = bagscope_reader::OpenOptions::default()
        .with_threads(1)
        .with_index_cache(bagscope_reader::IndexCache::Off);
    // Start from a real magic line most of the time so the fuzzer reaches the record parsers.
    let mut bytes = Vec::with_capacity(data.len() + 16);
    match data.first().map(|b| b % 4) {
        Some(0) => bytes.extend_from_slice(b"#ROSRECORD V1.2\n"),
        Some(1) | Some(2) => bytes.extend_from_slice(b"#ROSBAG V2.0\n"),
        _ => {}
    }
    bytes.extend_from_slice(data.get(1..).unwrap_or_default());
    // From memory: no file per execution.
    if let Ok(bag) = bagscope_reader::Bag::from_bytes_with("fuzz.bag", bytes, &opts) {
        if let Ok(it) = bag.messages(&bagscope_reader::Filter::default()) {
            for m in it.take(100_000) {
                let _ = m;
            }
        }
        let _ = bagscope_reader::check::check(&bag, 1, None);
    }
});
