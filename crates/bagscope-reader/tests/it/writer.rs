//! The writer's bags read back identically with bagscope, for every compression and chunk size,
//! and with the peer reader rosbags (tests/corpus/peer_rosbags.rs).
#![allow(clippy::unwrap_used)]

use crate::kit;

use bagscope_reader::{Bag, BagWriter, Compression, Filter, WriteOptions};
use kit::{spec, write_fixture};

#[test]
fn round_trips_every_compression_and_chunk_size() {
    let d = kit::temp_dir("writer");
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        for chunk_size in [1, 300, 768 * 1024] {
            let p = d.join(format!("rt-{}-{chunk_size}.bag", compression.name()));
            let mut wrote = write_fixture(&p, compression, chunk_size, 1000);
            let bag = Bag::open(&p).unwrap();
            let s = bag.summary();
            assert!(
                s.indexed && bag.warnings().is_empty(),
                "{:?}",
                bag.warnings()
            );
            assert_eq!(s.message_count, 1000);
            assert_eq!(s.connections.len(), 3);
            assert_eq!(s.topic("/b").unwrap().connections.len(), 2);
            assert_eq!(s.topic("/b").unwrap().message_count, 666);
            assert!(s.chunks.iter().all(|c| c.compression == compression));
            if chunk_size == 1 {
                assert_eq!(s.chunks.len(), 1000);
            }
            wrote.sort_by_key(|w| w.1);
            let got: Vec<(u32, u64, Vec<u8>)> = bag
                .messages(&Filter::default())
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (s.connections[m.conn].id, m.time_ns, m.data.to_vec())
                })
                .collect();
            assert_eq!(got, wrote, "{compression:?} {chunk_size}");
            let r = bagscope_reader::check::check(&bag, 2, None).unwrap();
            assert!(r.problems.is_empty(), "{:?}", r.problems);
            assert_eq!(r.messages, 1000);
        }
    }
}

#[test]
fn filters_by_connection_and_time_and_finds_the_nth_message() {
    let d = kit::temp_dir("filter");
    let p = d.join("f.bag");
    let wrote = write_fixture(&p, Compression::Lz4, 500, 3000);
    let bag = Bag::open(&p).unwrap();
    let s = bag.summary();
    let start = s.start_ns.unwrap();
    let (lo, hi) = (start + 500_000_000, start + 1_500_000_000);
    let conns = bag.connections_of_topics(&["/b"]).unwrap();
    let f = Filter {
        connections: Some(conns.clone()),
        start_ns: Some(lo),
        end_ns: Some(hi),
    };
    let got: Vec<u64> = bag
        .messages(&f)
        .unwrap()
        .map(|m| m.unwrap().time_ns)
        .collect();
    let mut want: Vec<u64> = wrote
        .iter()
        .filter(|w| w.0 != 0 && w.1 >= lo && w.1 < hi)
        .map(|w| w.1)
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
    // n-th message of a connection through its table.
    let m = bag.nth_message(conns[0], 10).unwrap();
    let mut times: Vec<u64> = wrote.iter().filter(|w| w.0 == 1).map(|w| w.1).collect();
    times.sort_unstable();
    assert_eq!(m.time_ns, times[10]);
}

#[test]
fn an_unfinished_writer_leaves_nothing_behind() {
    let d = kit::temp_dir("unfinished");
    let p = d.join("never.bag");
    {
        let mut w = BagWriter::create(&p, WriteOptions::default()).unwrap();
        let c = w.add_connection(spec("/a", "std_msgs/Float64"));
        w.write(c, 1, b"12345678").unwrap();
    }
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        0,
        "a dropped writer left a file"
    );
}

/// Generated format 1.2 bags, indexed and not, read like the 2.0 ones: same summary, tables,
/// time order, filters; and exported to 2.0 unchanged.
#[test]
fn generated_v12_bags_indexed_and_not() {
    let d = kit::temp_dir("v12");
    for indexed in [true, false] {
        let p = d.join(format!("v12-{indexed}.bag"));
        let mut wrote = kit::write_v12(&p, indexed, 1001);
        let bag = Bag::open(&p).unwrap();
        let s = bag.summary();
        assert_eq!(s.version.as_str(), "1.2");
        assert_eq!(s.indexed, indexed);
        assert_eq!(s.message_count, 1001);
        assert_eq!(s.topic("/a").unwrap().message_count, 501);
        assert_eq!(s.topic("/b").unwrap().message_count, 500);
        assert_eq!(s.connections[0].message_definition, "float64 data\n");
        wrote.sort_by_key(|w| w.1);
        assert_eq!(kit::messages(&bag), wrote);
        // n-th message without scanning, and a filtered window.
        let a = bag.connections_of_topics(&["/a"]).unwrap()[0];
        let m = bag.nth_message(a, 7).unwrap();
        assert_eq!(m.data.to_vec(), (14.0f64 * 0.25).to_le_bytes().to_vec());
        let w: Vec<_> = bag
            .messages(&Filter {
                connections: Some(vec![a]),
                start_ns: Some(wrote[100].1),
                end_ns: Some(wrote[200].1),
            })
            .unwrap()
            .collect();
        assert_eq!(w.len(), 50);
        // Decodes from the 1.2 definition.
        let plan = bagscope_reader::encoding::Plan::for_connection(&s.connections[a], &[]).unwrap();
        assert!(plan.md5_matches(&s.connections[a].md5sum));
    }
}

/// A bag read from memory is the same bag as from its file.
#[test]
fn a_bag_in_memory_reads_like_its_file() {
    let d = kit::temp_dir("memory");
    let p = d.join("m.bag");
    write_fixture(&p, Compression::Bz2, 3000, 900);
    let f = Bag::open(&p).unwrap();
    let m = Bag::from_bytes("m.bag", std::fs::read(&p).unwrap()).unwrap();
    assert_eq!(f.summary().message_count, m.summary().message_count);
    let all = |b: &Bag| -> Vec<(usize, u64, Vec<u8>)> {
        b.messages(&Filter::default())
            .unwrap()
            .map(|x| {
                let x = x.unwrap();
                (x.conn, x.time_ns, x.data.to_vec())
            })
            .collect()
    };
    assert_eq!(all(&f), all(&m));
    // Cut short in memory: recovered the same way as a truncated file.
    let bytes = std::fs::read(&p).unwrap();
    let cut = Bag::from_bytes("cut.bag", bytes[..bytes.len() * 2 / 3].to_vec()).unwrap();
    assert!(!cut.summary().indexed);
    assert!(!cut.warnings().is_empty());
}
