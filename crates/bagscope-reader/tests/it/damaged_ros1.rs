//! Damaged input: a multi-chunk bag truncated at many offsets, and bytes flipped at random
//! (seeded), each gives a clean result or a clean error, never a panic or a hang.
#![allow(clippy::unwrap_used)]

use crate::kit;

use bagscope_reader::{Bag, Compression, Filter};

/// Messages read, then the check; the error text if it does not open. Within 30 s.
fn read_all(p: &std::path::Path) -> Result<u64, String> {
    let p = p.to_path_buf();
    let what = format!("reading {}", p.display());
    kit::within(30, &what, move || read_all_now(&p))
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
    let _ = bagscope_reader::check::check(&bag, 2, None);
    Ok(n)
}

#[test]
fn truncation_at_many_offsets_recovers_or_errors_cleanly() {
    let d = kit::temp_dir("truncate");
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        let full = d.join(format!("full-{}.bag", compression.name()));
        kit::write_fixture(&full, compression, 2000, 600);
        let bytes = std::fs::read(&full).unwrap();
        // Where each chunk record ends and how many messages it holds, from the whole file.
        let chunks = kit::chunk_ends(&Bag::open(&full).unwrap());
        assert!(chunks.len() > 5);
        let cut_path = d.join("cut.bag");
        let mut last_recovered = 0;
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            std::fs::write(&cut_path, &bytes[..cut]).unwrap();
            // Every message of a chunk the cut leaves whole comes back; of the chunk it cuts
            // through, at most its own.
            let (whole, cut_through) = kit::after_cut(&chunks, cut);
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
    let d = kit::temp_dir("flip");
    let full = d.join("full.bag");
    kit::write_fixture(&full, Compression::Lz4, 1500, 300);
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
    let d = kit::temp_dir("read-ahead-error");
    let full = d.join("full.bag");
    kit::write_fixture(&full, Compression::Lz4, 2000, 600);
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
    // Two threads, whatever the machine: the read-ahead runs beside the reader.
    let bag = Bag::open_with(
        &bad,
        &bagscope_reader::OpenOptions::default().with_threads(2),
    )
    .unwrap();
    assert!(bag.summary().indexed);
    let errors: Vec<bagscope_reader::Error> = bag
        .messages(&Filter::default())
        .unwrap()
        .filter_map(|m| m.err())
        .collect();
    assert!(!errors.is_empty());
    for e in &errors {
        assert!(
            matches!(e, bagscope_reader::Error::Decompress { chunk_pos, .. } if *chunk_pos == victim.pos),
            "{e:?}"
        );
    }
}

/// Messages of a bag, all of them, with the error of the first that does not read.
fn messages_of(p: &std::path::Path) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let bag = Bag::open(p).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for m in bag
        .messages(&Filter::default())
        .map_err(|e| e.to_string())?
    {
        let m = m.map_err(|e| e.to_string())?;
        out.push((m.time_ns, m.data.to_vec()));
    }
    Ok(out)
}

/// What ROS's C++ reader and rosbags read, bagscope reads: a bag header record without its
/// data-length field (its padding then reads as the length), and an index entry that points
/// at the connection record just before its message (the reader skips connection records
/// there, as `readMessageDataHeaderFromBuffer` does).
#[test]
fn what_ros_reads_of_a_header_without_data_length_and_offsets_at_connections() {
    let d = kit::temp_dir("ros-reads");
    let good = d.join("good.bag");
    kit::write_fixture(&good, Compression::None, 1 << 20, 30);
    let bytes = std::fs::read(&good).unwrap();
    let want = messages_of(&good).unwrap();
    assert_eq!(want.len(), 30);

    // The bag header's data length replaced by padding: nothing after it moves.
    let magic = b"#ROSBAG V2.0\n".len();
    let hlen = u32::from_le_bytes(bytes[magic..magic + 4].try_into().unwrap()) as usize;
    let mut no_len = bytes.clone();
    no_len[magic + 4 + hlen..magic + 8 + hlen].copy_from_slice(b"    ");
    let p = d.join("no-data-length.bag");
    std::fs::write(&p, &no_len).unwrap();
    assert_eq!(messages_of(&p).unwrap(), want);
    let bag = Bag::open(&p).unwrap();
    assert!(
        bag.warnings()
            .iter()
            .any(|w| w.contains("data length is missing or wrong")),
        "{:?}",
        bag.warnings()
    );

    // The first message's index entry moved to the connection record before it (offset 0 of
    // the chunk): its 8 time bytes then the offset, the one occurrence of those time bytes
    // followed by an offset past the connection record.
    let t0 = want[0].0;
    let tb: Vec<u8> = [(t0 / 1_000_000_000) as u32, (t0 % 1_000_000_000) as u32]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let at: Vec<usize> = (0..bytes.len() - 12)
        .filter(|&i| bytes[i..i + 8] == tb[..])
        .filter(|&i| {
            let off = u32::from_le_bytes(bytes[i + 8..i + 12].try_into().unwrap());
            (64..1 << 20).contains(&off)
        })
        .collect();
    assert_eq!(at.len(), 1, "the index entry of the first message");
    let mut at_conn = bytes.clone();
    at_conn[at[0] + 8..at[0] + 12].copy_from_slice(&0u32.to_le_bytes());
    let p = d.join("offset-at-connection.bag");
    std::fs::write(&p, &at_conn).unwrap();
    assert_eq!(messages_of(&p).unwrap(), want);
    // `check` says so as a warning, every message accounted for.
    let bag = Bag::open(&p).unwrap();
    let r = bagscope_reader::check::check(&bag, 1, None).unwrap();
    assert_eq!(r.messages, 30);
    assert_eq!(
        r.problems,
        ["warning: chunk at byte 4109: 1 index entries point at the connection record just before their message; read past it, as ROS's own reader does"]
    );
}
