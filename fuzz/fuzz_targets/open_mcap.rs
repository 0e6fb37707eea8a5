//! MCAP from arbitrary bytes (the magic is prepended, so every input is an MCAP attempt):
//! opening (summary or linear scan), the message tables, reading every message in time order
//! and checking every chunk must return, never panic, hang or allocate without bound.
#![no_main]

use bagscope_reader::{Bag, Filter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The single-threaded mode: no read-ahead or check threads per execution; no index cache
    // written for a scanned input.
    let opts = bagscope_reader::OpenOptions::default()
        .with_threads(1)
        .with_index_cache(bagscope_reader::IndexCache::Off);
    let mut bytes = bagscope_reader::storage::mcap::MAGIC.to_vec();
    bytes.extend_from_slice(data);
    let Ok(bag) = Bag::from_bytes_with("fuzz.mcap", bytes, &opts) else {
        return;
    };
    let _ = bag.tables();
    if let Ok(it) = bag.messages(&Filter::default()) {
        for m in it {
            let _ = m;
        }
    }
    let _ = bagscope_reader::check::check(&bag, 1, None);
});
