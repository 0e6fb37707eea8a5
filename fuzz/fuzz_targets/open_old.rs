//! ROS 1 files older than 1.2 from arbitrary bytes: the first byte picks the magic line
//! prepended (`#ROSRECORD V1.1`, `#ROSLOG V1.1`, `#ROSLOG V1.0`, or none: version 0 is
//! recognised from its three text lines). Opening (the linear scan these formats need), the
//! tables, every message in time order, the check and decoding each message with the
//! definition found for its type (these files store none: the shipped ones) must return,
//! never panic, hang or allocate without bound.
#![no_main]

use bagscope_reader::{Bag, Filter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The single-threaded mode: no read-ahead or check threads per execution.
    let opts = bagscope_reader::OpenOptions::default()
        .with_threads(1)
        .with_index_cache(bagscope_reader::IndexCache::Off);
    let mut bytes = Vec::with_capacity(data.len() + 16);
    match data.first().map(|b| b % 4) {
        Some(0) => bytes.extend_from_slice(b"#ROSRECORD V1.1\n"),
        Some(1) => bytes.extend_from_slice(b"#ROSLOG V1.1\n"),
        Some(2) => bytes.extend_from_slice(b"#ROSLOG V1.0\n"),
        _ => {}
    }
    bytes.extend_from_slice(data.get(1..).unwrap_or_default());
    let Ok(bag) = Bag::from_bytes_with("fuzz.bag", bytes, &opts) else {
        return;
    };
    let plans: Vec<_> = bag
        .summary()
        .connections
        .iter()
        .map(|c| bagscope_reader::encoding::Plan::for_connection(c, &[]).ok())
        .collect();
    if let Ok(it) = bag.messages(&Filter::default()) {
        for m in it.take(100_000).flatten() {
            if let Some(Some(p)) = plans.get(m.conn) {
                let _ = p.decode(&m.data);
            }
        }
    }
    let _ = bagscope_reader::check::check(&bag, 1, None);
});
