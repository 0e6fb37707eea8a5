//! bagscope's bz2 decoder against libbz2 on arbitrary bytes (seed it with bz2 streams: chunks of
//! the corpus' bz2 bags, `bzip2` of anything): it must return, never panic, within its output
//! limit; where it decodes, libbz2 must decode the same bytes.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limit = 1 << 22;
    let mut out = Vec::new();
    let ours = bagscope_reader::storage::bz2::decode(data, &mut out, limit);
    // A block makes under 52 bytes a byte of its table past the limit (see `walk`).
    assert!(out.len() <= limit + 52 * 900_000);
    if ours.is_ok() {
        assert!(out.len() <= limit);
        let mut want = Vec::new();
        let r = bzip2::read::BzDecoder::new(data)
            .take(limit as u64 + 1)
            .read_to_end(&mut want);
        assert!(r.is_ok(), "libbz2 refuses what bagscope decoded: {r:?}");
        assert!(want == out, "libbz2 decodes other bytes");
    }
});
