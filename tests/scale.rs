//! The Scale work at a size a test can afford: `bagscope gen-sparse` recordings (real index,
//! camera pixels as holes) open, index, read and check; a ROS 1 bag of more chunks than the
//! summary reads headers for opens without them and reads each on demand, with a clear error
//! where one is damaged; a scanned recording reopens from the index cache.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use bagscope_reader::encoding::Plan;
use bagscope_reader::{Bag, Filter};

fn gen(out: &Path, format: &str, size: &str, chunk: &str, messages: &str) {
    let r = common::bagscope(&[
        &"gen-sparse",
        &out,
        &"--format",
        &format,
        &"--size",
        &size,
        &"--chunk",
        &chunk,
        &"--messages",
        &messages,
    ]);
    assert_eq!(r.code, Some(0), "gen-sparse failed: {}", r.stderr);
}

/// Every message in time order, each decoded from its type's definition; returns the count.
fn read_all(bag: &Bag) -> u64 {
    let s = bag.summary();
    let plans: Vec<Plan> = s
        .connections
        .iter()
        .map(|c| Plan::for_connection(c, &[]).expect("definition"))
        .collect();
    let mut n = 0u64;
    let mut last = 0u64;
    for m in bag.messages(&Filter::default()).expect("iterate") {
        let m = m.expect("message");
        assert!(m.time_ns >= last, "time order");
        last = m.time_ns;
        plans[m.conn].decode(&m.data).expect("decodes");
        n += 1;
    }
    n
}

#[test]
fn sparse_recordings_open_index_and_check_in_both_formats() {
    let d = common::temp_dir("sparse");
    for format in ["bag", "mcap"] {
        let p = d.join(format!("s.{format}"));
        gen(&p, format, "256M", "8M", "20000");
        let apparent = std::fs::metadata(&p).unwrap().len();
        assert!(apparent > 250 << 20, "{apparent} bytes");
        let bag = Bag::open(&p).unwrap();
        let s = bag.summary();
        assert!(s.indexed, "{format}: opened from its index");
        assert_eq!(s.message_count, 20_000);
        assert_eq!(s.topics.len(), 100);
        assert_eq!(s.chunks.len(), 32);
        let cam = s.topic("/camera_0/image_raw").expect("camera topic");
        assert_eq!(cam.message_count, 32, "one image per chunk");
        let t = bag.tables().unwrap();
        assert_eq!(t.len(), 20_000);
        assert_eq!(read_all(&bag), 20_000);
        let r = bagscope_reader::check::check(&bag, 2, None).unwrap();
        assert!(r.problems.is_empty(), "{format}: {:?}", r.problems);
        assert_eq!(r.messages, 20_000);
        // One message read alone (its record, not its 8 MB chunk) equals the same message
        // read through its chunk in time order: every 97th of each topic.
        let fresh = Bag::open(&p).unwrap();
        let alone: Vec<(usize, u64, Vec<u8>)> = t
            .per_connection
            .iter()
            .enumerate()
            .flat_map(|(c, tab)| tab.iter().step_by(97).map(move |e| (c, *e)))
            .map(|(c, e)| {
                let m = fresh.message(c, e).unwrap();
                assert_eq!((m.conn, m.entry), (c, e));
                (c, m.time_ns, m.data.to_vec())
            })
            .collect();
        let mut through: std::collections::HashMap<(usize, u64, u32, u32), Vec<u8>> =
            Default::default();
        for m in bag.messages(&Filter::default()).unwrap() {
            let m = m.unwrap();
            through.insert(
                (m.conn, m.time_ns, m.entry.chunk, m.entry.offset),
                m.data.to_vec(),
            );
        }
        let mut k = 0;
        for (c, tab) in t.per_connection.iter().enumerate() {
            for e in tab.iter().step_by(97) {
                let (ac, at, ad) = &alone[k];
                assert_eq!((*ac, *at), (c, e.time_ns));
                assert_eq!(&through[&(c, e.time_ns, e.chunk, e.offset)], ad, "{format}");
                k += 1;
            }
        }
        assert!(k > 200);
        // An image: real header and size, pixels all zero (the hole).
        let ci = cam.connections[0];
        let m = bag.nth_message(ci, 5).unwrap();
        let plan = Plan::for_connection(&s.connections[ci], &[]).unwrap();
        let img = bagscope_ops::media::image::decode_message(&plan, &m.data).expect("an image");
        assert_eq!(img.width, 2048);
        assert!(img.height > 0);
    }
}

#[test]
fn many_chunks_open_without_reading_their_headers() {
    let d = common::temp_dir("lazy");
    let p = d.join("many.bag");
    // 5,000 chunks of about 4 KB: more than the summary reads headers for.
    gen(&p, "bag", "20000K", "4K", "60000");
    let bag = Bag::open(&p).unwrap();
    let s = bag.summary();
    assert!(s.chunks.len() > 4096, "{} chunks", s.chunks.len());
    assert!(s.chunks.iter().all(|c| c.header_pending()));
    assert_eq!(s.message_count, 60_000);
    assert_eq!(
        bag.compression_counts().get("none"),
        Some(&s.chunks.len()),
        "read on demand"
    );
    assert_eq!(bag.tables().unwrap().len(), 60_000);
    assert_eq!(read_all(&bag), 60_000);
    let r = bagscope_reader::check::check(&bag, 2, None).unwrap();
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    // Export a range and read it back (the writer reads chunks through their layouts).
    let out = d.join("part.bag");
    let r = common::bagscope(&[
        &"export", &p, &"-o", &out, &"--start", &"+1", &"--end", &"+2",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let part = Bag::open(&out).unwrap();
    assert_eq!(part.summary().message_count, 20_000);

    // A damaged chunk header: opening still works (it is not read), reading that chunk
    // fails with an error naming its byte offset, and the other chunks read.
    let bytes = std::fs::read(&p).unwrap();
    let victim = s.chunks[100].pos as usize;
    let mut bad = bytes.clone();
    bad[victim + 4..victim + 12].copy_from_slice(b"XXXXXXXX");
    let bp = d.join("bad.bag");
    std::fs::write(&bp, &bad).unwrap();
    let bag = Bag::open(&bp).unwrap();
    let e = bag.decompress_chunk(100).unwrap_err().to_string();
    assert!(e.contains(&victim.to_string()), "{e}");
    assert!(bag.decompress_chunk(101).is_ok());
    // The tables rebuild what they can and say which chunk failed.
    match bag.tables() {
        Ok(t) => assert!(t.len() < 60_000),
        Err(e) => assert!(e.to_string().contains(&victim.to_string()), "{e}"),
    }
}

/// A time range read before the tables exist (from the index of the chunks it meets only)
/// gives exactly what it gives once the whole tables are built.
#[test]
fn a_range_read_before_the_tables_equals_one_after() {
    let d = common::temp_dir("range");
    for format in ["bag", "mcap"] {
        let p = d.join(format!("r.{format}"));
        gen(&p, format, "64M", "1M", "30000");
        let key = |b: &Bag, f: &Filter| -> Vec<(usize, u64, Vec<u8>)> {
            b.messages(f)
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (m.conn, m.time_ns, m.data[..m.data.len().min(64)].to_vec())
                })
                .collect()
        };
        let s0 = Bag::open(&p).unwrap().summary().start_ns.unwrap();
        for (a, b) in [(0.2, 0.5), (0.0, 0.01), (0.9, 2.0), (0.33, 0.330_05)] {
            let f = Filter {
                start_ns: Some(s0 + (a * 1e9) as u64),
                end_ns: Some(s0 + (b * 1e9) as u64),
                ..Default::default()
            };
            let early = Bag::open(&p).unwrap();
            let got = key(&early, &f);
            assert!(
                early.tables_if_built().is_none(),
                "the whole tables were not built"
            );
            let late = Bag::open(&p).unwrap();
            late.tables().unwrap();
            assert_eq!(got, key(&late, &f), "{format} {a}..{b}");
            assert!(!got.is_empty() || b - a < 0.001);
        }
    }
}

/// A recording without an index is scanned once; the index cache then opens it again with the
/// same summary, tables and messages, is not used once the file changes, and a damaged cache
/// file is ignored.
#[test]
fn a_scanned_recording_reopens_from_the_index_cache() {
    let d = common::temp_dir("sidecar");
    let cache = d.join("cache");
    // The cache of this test's recordings only.
    let opts = bagscope_reader::OpenOptions::default()
        .with_index_cache(bagscope_reader::IndexCache::Dir(cache.clone()));
    for format in ["bag", "mcap"] {
        let p = d.join(format!("cut.{format}"));
        let r = common::bagscope(&[
            &"gen-sparse",
            &p,
            &"--format",
            &format,
            &"--size",
            &"80M",
            &"--chunk",
            &"4M",
            &"--messages",
            &"20000",
            &"--no-index",
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let all = |b: &Bag| -> Vec<(usize, u64, usize)> {
            b.messages(&Filter::default())
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (m.conn, m.time_ns, m.data.len())
                })
                .collect()
        };
        let first = Bag::open_with(&p, &opts).unwrap();
        assert!(!first.summary().indexed);
        assert!(!first.warnings().iter().any(|w| w.contains("index cache")));
        let want = all(&first);
        assert_eq!(want.len(), 20_000, "{format}");
        let files = || std::fs::read_dir(&cache).map_or(0, |r| r.count());
        assert!(files() > 0, "{format}: a cache file was written");
        let again = Bag::open_with(&p, &opts).unwrap();
        assert!(
            again.warnings().iter().any(|w| w.contains("index cache")),
            "{format}: {:?}",
            again.warnings()
        );
        assert_eq!(again.summary().message_count, 20_000);
        assert_eq!(again.summary().topics, first.summary().topics);
        assert_eq!(again.summary().connections, first.summary().connections);
        assert_eq!(all(&again), want);
        assert!(
            bagscope_reader::check::check(&again, 2, None)
                .unwrap()
                .messages
                == 20_000
        );
        // Changed (a new modification time): scanned again, not taken from the cache.
        let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        drop(f);
        let changed = Bag::open_with(&p, &opts).unwrap();
        assert!(!changed.warnings().iter().any(|w| w.contains("index cache")));
        // Damaged cache files are ignored, whatever the damage.
        for e in std::fs::read_dir(&cache).unwrap() {
            let e = e.unwrap().path();
            let mut b = std::fs::read(&e).unwrap();
            let n = b.len();
            for k in 0..40 {
                b[(k * 7919 + 100) % n] ^= 0x5a;
            }
            std::fs::write(&e, &b[..n - 3]).unwrap();
        }
        let damaged = Bag::open_with(&p, &opts).unwrap();
        assert_eq!(all(&damaged), want, "{format}: scanned again");
    }
    // A rosbag2 SQLite file of 64 MiB or more: its row scan is kept and reused the same way.
    let r2 = d.join("rows");
    let r = common::bagscope(&[
        &"gen-sparse",
        &r2,
        &"--format",
        &"rosbag2-sqlite3",
        &"--messages",
        &"1300000",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let first = Bag::open_with(&r2, &opts).unwrap();
    // Opened from its metadata.yaml: the rows are scanned (and the scan kept) on first need.
    assert!(first.quick_summary().rows_pending);
    assert!(!first.warnings().iter().any(|w| w.contains("index cache")));
    first.tables().unwrap();
    let again = Bag::open_with(&r2, &opts).unwrap();
    assert!(
        again.warnings().iter().any(|w| w.contains("index cache")),
        "{:?}",
        again.warnings()
    );
    assert_eq!(again.summary().message_count, 1_300_000);
    assert_eq!(again.summary().topics, first.summary().topics);
    assert_eq!(again.summary().chunks, first.summary().chunks);
    let (a, b) = (first.tables().unwrap(), again.tables().unwrap());
    assert_eq!(a.per_connection, b.per_connection);
    let pick = |b: &Bag| -> Vec<Vec<u8>> {
        (0..100)
            .map(|c| b.nth_message(c, 1234).unwrap().data.to_vec())
            .collect()
    };
    assert_eq!(pick(&first), pick(&again));
}

/// An MCAP file of more chunk indexes than are parsed on one thread: the summary's counts
/// (per chunk, from the message index offsets, gathered from several threads) equal what the
/// message index records hold, chunk by chunk.
#[test]
fn many_mcap_chunk_indexes_parsed_in_parts_agree_with_the_tables() {
    let d = common::temp_dir("many-mcap");
    let p = d.join("many.mcap");
    gen(&p, "mcap", "20000K", "4K", "60000");
    let bag = Bag::open(&p).unwrap();
    let s = bag.summary();
    assert!(s.chunks.len() > 4096, "{} chunks", s.chunks.len());
    assert_eq!(s.message_count, 60_000);
    let t = bag.tables().unwrap();
    let mut per_chunk: std::collections::HashMap<(usize, u32), u32> = Default::default();
    let mut in_chunk = vec![0u32; s.chunks.len()];
    for (ci, tab) in t.per_connection.iter().enumerate() {
        assert_eq!(tab.len() as u64, s.connections[ci].message_count);
        for e in tab {
            *per_chunk.entry((e.chunk as usize, ci as u32)).or_default() += 1;
            in_chunk[e.chunk as usize] += 1;
        }
    }
    for (i, ch) in s.chunks.iter().enumerate() {
        for &(ci, n) in &ch.counts {
            assert_eq!(
                per_chunk.get(&(i, ci)),
                Some(&n),
                "chunk {i} connection {ci}"
            );
        }
        let total: u32 = ch.counts.iter().map(|c| c.1).sum();
        assert_eq!(total, in_chunk[i], "chunk {i}");
    }
}
