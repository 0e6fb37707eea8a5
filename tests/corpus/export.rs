//! Export: ranges that cut through chunks, several connections per topic, every compression,
//! format 1.2 and unindexed sources, cancellation leaving nothing behind, the bag being read
//! never written, and rosbags reading exactly the exported messages.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::AtomicBool;

use bagscope_ops::tables::export::{export, ExportOptions};
use bagscope_reader::{Bag, Compression, Error, Filter, WriteOptions};

/// (topic, callerid, time, data) of every message, in time order.
fn messages(bag: &Bag, filter: &Filter) -> Vec<(String, Option<String>, u64, Vec<u8>)> {
    let s = bag.summary();
    bag.messages(filter)
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            let c = &s.connections[m.conn];
            (
                c.topic.clone(),
                c.callerid.clone(),
                m.time_ns,
                m.data.to_vec(),
            )
        })
        .collect()
}

fn opts(filter: Filter, compression: Compression) -> ExportOptions {
    ExportOptions {
        filter,
        write: WriteOptions {
            compression,
            chunk_size: 3000,
        },
        ..Default::default()
    }
}

#[test]
fn a_range_through_chunks_with_several_connections_per_topic() {
    let d = common::temp_dir("export-range");
    let src = d.join("src.bag");
    common::write_fixture(&src, Compression::Lz4, 2000, 3000);
    let bag = Bag::open(&src).unwrap();
    let (a, b) = (
        bag.summary().start_ns.unwrap(),
        bag.summary().end_ns.unwrap(),
    );
    // A range that starts and ends inside chunks, and only topic /b (two connections).
    let filter = Filter {
        connections: Some(bag.connections_of_topics(&["/b"]).unwrap()),
        start_ns: Some(a + (b - a) / 3 + 123_457),
        end_ns: Some(a + 2 * (b - a) / 3 + 7),
    };
    let want = messages(&bag, &filter);
    assert!(want.len() > 500);
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        let out = d.join(format!("out-{}.bag", compression.name()));
        let r = export(
            &bag,
            &out,
            &opts(filter.clone(), compression),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(r.messages as usize, want.len());
        assert_eq!(r.connections, 2, "both connections of /b, kept apart");
        let got_bag = Bag::open(&out).unwrap();
        assert!(got_bag.summary().indexed);
        assert!(got_bag.warnings().is_empty(), "{:?}", got_bag.warnings());
        assert_eq!(messages(&got_bag, &Filter::default()), want);
        assert_eq!(
            got_bag
                .summary()
                .compression_counts()
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            [compression.name()]
        );
    }
    // No temporary file is left beside the outputs.
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn recovered_and_old_bags_become_indexed_bags() {
    let dir = common::corpus_dir();
    let d = common::temp_dir("export-repair");
    {
        let name = "foxglove-cli/gps.bag.active";
        let p = dir.join(name);
        let bag = Bag::open(&p).unwrap();
        let want = messages(&bag, &Filter::default());
        let out = d.join("repaired.bag");
        let r = export(
            &bag,
            &out,
            &opts(Filter::default(), Compression::Lz4),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(r.messages as usize, want.len(), "{name}");
        let fixed = Bag::open(&out).unwrap();
        assert!(fixed.summary().indexed, "{name}: the export is indexed");
        assert!(
            fixed.warnings().is_empty(),
            "{name}: {:?}",
            fixed.warnings()
        );
        assert_eq!(messages(&fixed, &Filter::default()), want, "{name}");
    }
    // Every 1.2 bag of the corpus exports to 2.0 with the same messages.
    let mut n12 = 0;
    for e in std::fs::read_dir(dir.join("ccny")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "bag") {
            continue;
        }
        let bag = Bag::open(&p).unwrap();
        if bag.summary().version.as_str() != "1.2" {
            continue;
        }
        let want = messages(&bag, &Filter::default());
        let out = d.join("from12.bag");
        export(
            &bag,
            &out,
            &opts(Filter::default(), Compression::Bz2),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        let got = Bag::open(&out).unwrap();
        assert_eq!(got.summary().version.as_str(), "2.0");
        assert_eq!(messages(&got, &Filter::default()), want);
        n12 += 1;
    }
    assert_eq!(n12, 6, "the six 1.2 bags of ccny/");
}

#[test]
fn cancelling_leaves_nothing_and_the_source_is_never_written() {
    let d = common::temp_dir("export-cancel");
    let src = d.join("src.bag");
    common::write_fixture(&src, Compression::None, 2000, 20000);
    let before = std::fs::read(&src).unwrap();
    let bag = Bag::open(&src).unwrap();
    let out = d.join("out.bag");
    let cancel = AtomicBool::new(false);
    let mut calls = 0;
    let r = export(
        &bag,
        &out,
        &opts(Filter::default(), Compression::Lz4),
        &cancel,
        &mut |_| {
            calls += 1;
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        },
    );
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    assert!(calls >= 1);
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["src.bag"], "nothing but the source remains");
    // Over the bag being read: refused, and the bag is untouched.
    let r = export(
        &bag,
        &src,
        &opts(Filter::default(), Compression::Lz4),
        &AtomicBool::new(false),
        &mut |_| {},
    );
    assert!(r.unwrap_err().to_string().contains("being read"));
    let same = d.join(".").join("src.bag");
    assert!(export(
        &bag,
        &same,
        &opts(Filter::default(), Compression::Lz4),
        &AtomicBool::new(false),
        &mut |_| {}
    )
    .is_err());
    assert_eq!(std::fs::read(&src).unwrap(), before);
}

const READ: &str = r#"
import sys
from rosbags.rosbag1 import Reader
with Reader(sys.argv[1]) as r:
    for conn, t, raw in r.messages():
        print(conn.topic, t, raw.hex())
"#;

#[test]
fn rosbags_reads_exactly_the_exported_messages() {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import rosbags.rosbag1"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "rosbags missing in CI");
        eprintln!("rosbags is not installed: skipping");
        return;
    }
    let bag = Bag::open(common::corpus_dir().join("rosbag.js/example.bag")).unwrap();
    let (a, _) = (bag.summary().start_ns.unwrap(), 0);
    let filter = Filter {
        connections: Some(
            bag.connections_of_topics(&["/turtle1/pose", "/tf"])
                .unwrap(),
        ),
        start_ns: Some(a + 5_000_000_000),
        end_ns: Some(a + 9_500_000_000),
    };
    let want = messages(&bag, &filter);
    let d = common::temp_dir("export-peer");
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        let out = d.join(format!("ex-{}.bag", compression.name()));
        export(
            &bag,
            &out,
            &opts(filter.clone(), compression),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        let o = std::process::Command::new("python3")
            .args(["-c", READ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut got: Vec<(String, u64, String)> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f.get(2).unwrap_or(&"").to_string(),
                )
            })
            .collect();
        let mut w: Vec<(String, u64, String)> = want
            .iter()
            .map(|(t, _, time, data)| {
                (
                    t.clone(),
                    *time,
                    data.iter().map(|b| format!("{b:02x}")).collect(),
                )
            })
            .collect();
        got.sort();
        w.sort();
        assert_eq!(got.len(), w.len());
        assert!(got == w, "rosbags reads other messages than were exported");
    }
}

#[test]
fn parquet_one_file_per_topic_written_whole_or_not_at_all() {
    use arrow_array::Array;
    use bagscope_ops::tables::export::OutputFormat;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let d = common::temp_dir("export-parquet");
    let src = d.join("src.bag");
    common::write_fixture(&src, Compression::Lz4, 2000, 3000);
    let bag = Bag::open(&src).unwrap();
    let mut o = opts(Filter::default(), Compression::Zstd);
    o.format = Some(OutputFormat::Parquet);
    let out = d.join("pq");
    let r = export(&bag, &out, &o, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(r.messages, bag.summary().message_count);
    let s = bag.summary();
    assert_eq!(r.connections, s.topics.len());
    for t in &s.topics {
        let f = out.join(format!(
            "{}.parquet",
            t.name.trim_start_matches('/').replace('/', ".")
        ));
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut times = Vec::new();
        for b in reader {
            let b = b.unwrap();
            assert_eq!(b.schema().field(0).name(), "time_ns");
            assert_eq!(b.schema().field(1).name(), "recording");
            let c = b
                .column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap();
            times.extend(c.values().iter().map(|&v| v as u64));
        }
        let want: Vec<u64> = messages(
            &bag,
            &Filter {
                connections: Some(t.connections.clone()),
                ..Default::default()
            },
        )
        .into_iter()
        .map(|m| m.2)
        .collect();
        assert_eq!(times, want, "{}", t.name);
    }
    // An existing directory is not written into.
    let again = export(&bag, &out, &o, &AtomicBool::new(false), &mut |_| {});
    assert!(again.unwrap_err().to_string().contains("exists"));
    // Cancelled: nothing of it remains.
    let r = export(
        &bag,
        &d.join("pq2"),
        &o,
        &AtomicBool::new(true),
        &mut |_| {},
    );
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["pq", "src.bag"]);
}

/// Uncompressed chunks where the wanted messages are a small part (IMU-sized among
/// camera-sized ones) are read record by record, not whole: the same messages, in the same
/// order, as from the same recording with compressed chunks, for every message and for one
/// topic in a window.
#[test]
fn records_read_alone_from_large_uncompressed_chunks_are_the_same_messages() {
    let d = common::temp_dir("export-alone");
    let write = |p: &std::path::Path, compression| {
        use bagscope_reader::BagWriter;
        let mut w = BagWriter::create(
            p,
            WriteOptions {
                compression,
                chunk_size: 1 << 20,
            },
        )
        .unwrap();
        let cam = w.add_connection(common::spec("/camera", "sensor_msgs/Image"));
        let imu = w.add_connection(common::spec("/imu", "std_msgs/Float64"));
        for i in 0..2000u64 {
            let t = 1_600_000_000_000_000_000 + i * 2_500_000 + (i % 5) * 400_000;
            if i % 10 == 0 {
                w.write(cam, t, &vec![(i % 251) as u8; 200_000]).unwrap();
            }
            w.write(imu, t, &(i as f64).to_le_bytes()).unwrap();
        }
        w.finish().unwrap();
    };
    let (plain, lz4) = (d.join("plain.bag"), d.join("lz4.bag"));
    write(&plain, Compression::None);
    write(&lz4, Compression::Lz4);
    let (a, b) = (Bag::open(&plain).unwrap(), Bag::open(&lz4).unwrap());
    assert_eq!(common::messages(&a), common::messages(&b));
    let window = |bag: &Bag| {
        let s = bag.summary();
        let t0 = s.start_ns.unwrap();
        let f = Filter {
            connections: Some(bag.connections_of_topics(&["/imu"]).unwrap()),
            start_ns: Some(t0 + 1_000_000_000),
            end_ns: Some(t0 + 3_000_000_000),
        };
        bag.messages(&f)
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (m.time_ns, m.data.to_vec())
            })
            .collect::<Vec<_>>()
    };
    let (wa, wb) = (window(&a), window(&b));
    assert_eq!(wa.len(), 800);
    assert_eq!(wa, wb);
}
