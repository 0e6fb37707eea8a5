//! Damaged input: a multi-chunk bag truncated at many offsets, and bytes flipped at random
//! (seeded), each gives a clean result or a clean error, never a panic or a hang.
#![allow(clippy::unwrap_used)]

mod common;

use bagscope::{Bag, Compression, Filter};

/// Messages read, then the check; the error text if it does not open. Within 30 s.
fn read_all(p: &std::path::Path) -> Result<u64, String> {
    let p = p.to_path_buf();
    let what = format!("reading {}", p.display());
    common::within(30, &what, move || read_all_now(&p))
}

fn read_all_now(p: &std::path::Path) -> Result<u64, String> {
    let bag = Bag::open(p).map_err(|e| e.to_string())?;
    let mut n = 0;
    for m in bag
        .messages(&Filter::default())
        .map_err(|e| e.to_string())?
    {
        if m.is_ok() {
            n += 1;
        }
    }
    let _ = bagscope::ops::check::check(&bag, 2, None);
    Ok(n)
}

#[test]
fn truncation_at_many_offsets_recovers_or_errors_cleanly() {
    let d = common::temp_dir("truncate");
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        let full = d.join(format!("full-{}.bag", compression.name()));
        common::write_fixture(&full, compression, 2000, 600);
        let bytes = std::fs::read(&full).unwrap();
        // Where each chunk record ends and how many messages it holds, from the whole file.
        let chunks = common::chunk_ends(&Bag::open(&full).unwrap());
        assert!(chunks.len() > 5);
        let cut_path = d.join("cut.bag");
        let mut last_recovered = 0;
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            std::fs::write(&cut_path, &bytes[..cut]).unwrap();
            // Every message of a chunk the cut leaves whole comes back; of the chunk it cuts
            // through, at most its own.
            let (whole, cut_through) = common::after_cut(&chunks, cut);
            match read_all(&cut_path) {
                Ok(n) => {
                    let bag = Bag::open(&cut_path).unwrap();
                    assert!(!bag.summary().indexed, "a cut bag cannot be indexed");
                    assert!(!bag.warnings().is_empty(), "a cut bag has warnings");
                    assert!(
                        n >= whole && n <= whole + cut_through,
                        "{compression:?} cut {cut}: {n} messages, {whole} in whole chunks before it"
                    );
                    last_recovered = n;
                }
                // Only a cut inside the bag header (4,096 bytes after the magic line) fails.
                Err(e) => assert!(cut < 4109 && whole == 0, "cut {cut} failed: {e}"),
            }
        }
        assert!(
            last_recovered > 400,
            "{compression:?}: recovered only {last_recovered}"
        );
    }
}

#[test]
fn random_byte_flips_never_panic() {
    let d = common::temp_dir("flip");
    let full = d.join("full.bag");
    common::write_fixture(&full, Compression::Lz4, 1500, 300);
    let bytes = std::fs::read(&full).unwrap();
    let p = d.join("flipped.bag");
    // xorshift64, seeded: the same flips every run.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut ok, mut err) = (0, 0);
    for round in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..(1 + next() % 4) {
            let i = (next() % b.len() as u64) as usize;
            b[i] ^= 1 << (next() % 8);
        }
        std::fs::write(&p, &b).unwrap();
        // Messages (never more than were written) or an error that says something.
        match read_all(&p) {
            Ok(n) => {
                assert!(n <= 300, "round {round}: {n} messages");
                ok += 1;
            }
            Err(e) => {
                assert!(!e.trim().is_empty(), "round {round}: an empty error");
                err += 1;
            }
        }
    }
    // Flips in message data leave the bag readable; flips in a record header are errors or
    // recovered damage: both happen among 300 rounds.
    assert!(ok > 0 && err > 0, "{ok} read, {err} refused");
}

/// An error met by the read-ahead threads reaches the reader with its kind and place (it was
/// a string once): a chunk whose lz4 data is overwritten, in an indexed bag, read in time order
/// with threads decompressing ahead, gives `Error::Decompress` naming that chunk.
#[test]
fn a_read_ahead_error_keeps_its_kind() {
    let d = common::temp_dir("read-ahead-error");
    let full = d.join("full.bag");
    common::write_fixture(&full, Compression::Lz4, 2000, 600);
    let chunks = Bag::open(&full).unwrap().summary().chunks.clone();
    assert!(chunks.len() > 5);
    let victim = &chunks[3];
    let mut bytes = std::fs::read(&full).unwrap();
    let mid = (victim.data_pos + victim.data_len / 2) as usize;
    for b in &mut bytes[mid..mid + 16] {
        *b = 0xff;
    }
    let bad = d.join("bad.bag");
    std::fs::write(&bad, &bytes).unwrap();
    let bag = Bag::open(&bad).unwrap();
    assert!(bag.summary().indexed);
    bagscope::settings::set_threads(2);
    let errors: Vec<bagscope::Error> = bag
        .messages(&Filter::default())
        .unwrap()
        .filter_map(|m| m.err())
        .collect();
    assert!(!errors.is_empty());
    for e in &errors {
        assert!(
            matches!(e, bagscope::Error::Decompress { chunk_pos, .. } if *chunk_pos == victim.pos),
            "{e:?}"
        );
    }
}
