//! Small MCAP files written here record by record (no summary, unchunked, as a minimal
//! writer leaves them): ROS 1 and big-endian CDR messages decode, a schemaless channel is
//! listed, and the linear scan reads them in time order.
#![allow(clippy::unwrap_used)]

use crate::common;

use bagscope_reader::encoding::{Plan, Value};
use bagscope_reader::{Bag, Filter};

use common::mcap::{channel, file, message, schema, schema_bytes};

#[test]
fn unchunked_mcap_with_ros1_and_big_endian_cdr() {
    // CDR big endian: header 00 00, then int32 and a string (aligned to 4 after the header).
    let mut cdr = vec![0u8, 0, 0, 0];
    cdr.extend_from_slice(&(-5i32).to_be_bytes());
    cdr.extend_from_slice(&3u32.to_be_bytes());
    cdr.extend_from_slice(b"hi\0");
    let f = file(&[
        schema(1, "std_msgs/Float64", "ros1msg", "float64 data\n"),
        schema(2, "pkg/msg/T", "ros2msg", "int32 a\nstring s\n"),
        channel(1, 1, "/ros1", "ros1"),
        channel(2, 2, "/cdr", "cdr"),
        channel(3, 0, "/raw", "json"),
        message(1, 7, 30, &2.5f64.to_le_bytes()),
        message(2, 8, 10, &cdr),
        message(3, 9, 20, b"{\"a\": 1}"),
    ]);
    let bag = Bag::from_bytes("t.mcap", f).unwrap();
    let s = bag.summary();
    assert_eq!(s.version, bagscope_reader::Version::Mcap);
    assert!(!s.indexed, "no summary: read by a linear scan");
    assert_eq!(s.message_count, 3);
    assert!(bag.warnings().is_empty(), "{:?}", bag.warnings());
    let msgs: Vec<_> = bag
        .messages(&Filter::default())
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    let times: Vec<u64> = msgs.iter().map(|m| m.time_ns).collect();
    assert_eq!(times, [10, 20, 30], "time order, not file order");
    assert_eq!((msgs[0].sequence, msgs[0].publish_ns), (8, 11));
    for m in &msgs {
        let c = &s.connections[m.conn];
        match c.topic.as_str() {
            "/ros1" => {
                let v = Plan::for_connection(c, &[])
                    .unwrap()
                    .decode(&m.data)
                    .unwrap();
                let Value::Message { fields, .. } = v.value else {
                    panic!()
                };
                assert_eq!(fields[0].value, Value::F64(2.5));
            }
            "/cdr" => {
                let v = Plan::for_connection(c, &[])
                    .unwrap()
                    .decode(&m.data)
                    .unwrap();
                let Value::Message { fields, .. } = v.value else {
                    panic!()
                };
                assert_eq!(fields[0].value, Value::I32(-5));
                assert_eq!(fields[1].value, Value::String(b"hi".to_vec()));
            }
            "/raw" => {
                let e = Plan::for_connection(c, &[]).unwrap_err();
                assert!(e.reason.contains("not decoded: encoding json"), "{e}");
                assert_eq!(&*m.data, b"{\"a\": 1}");
            }
            t => panic!("unexpected topic {t}"),
        }
    }
    // `check` finds nothing wrong (the json channel is not damage).
    let dc = bagscope_reader::check::DecodeCheck::new(s, &[]);
    let hook = |ci: usize, t: u64, d: &[u8]| dc.message(ci, t, d);
    let r = bagscope_reader::check::check(&bag, 2, Some(&hook)).unwrap();
    assert_eq!(r.messages, 3);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert!(
        dc.summary_problems(s).is_empty(),
        "{:?}",
        dc.summary_problems(s)
    );
}

#[test]
fn a_message_before_its_channel_is_skipped_with_a_warning() {
    let f = file(&[
        message(4, 0, 5, b"x"),
        schema(1, "std_msgs/Float64", "ros1msg", "float64 data\n"),
        channel(1, 1, "/a", "ros1"),
        message(1, 1, 6, &1.0f64.to_le_bytes()),
    ]);
    let bag = Bag::from_bytes("t.mcap", f).unwrap();
    assert_eq!(bag.summary().message_count, 1);
    assert!(
        bag.warnings().iter().any(|w| w.contains("channel 4")),
        "{:?}",
        bag.warnings()
    );
}

#[test]
fn check_compares_every_chunk_record_with_the_index() {
    use bagscope_ops::tables::export::{export, ExportOptions, OutputFormat};
    use bagscope_reader::{Compression, WriteOptions};
    let dir = common::temp_dir("mcap-check");
    let src = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&src, 4).unwrap();
    // Uncompressed chunks: the test changes bytes inside them.
    let o = ExportOptions {
        write: WriteOptions {
            compression: Compression::None,
            chunk_size: 64 << 10,
        },
        format: Some(OutputFormat::Mcap),
        ..Default::default()
    };
    let out = dir.join("demo.mcap");
    let bag = Bag::open(&src).unwrap();
    export(
        &bag,
        &out,
        &o,
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let b = Bag::open(&out).unwrap();
    let r = bagscope_reader::check::check(&b, 2, None).unwrap();
    assert_eq!(r.messages, b.summary().message_count);
    assert!(r.chunks > 3 && r.problems.is_empty(), "{:?}", r.problems);
    // A message's log time changed in its chunk (uncompressed), not in the index: found.
    let tables = b.tables().unwrap();
    let busiest = tables
        .per_connection
        .iter()
        .max_by_key(|v| v.len())
        .unwrap();
    let e = busiest[3];
    let ch = &b.summary().chunks[e.chunk as usize];
    let at = (ch.data_pos + u64::from(e.offset)) as usize;
    let mut bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes[at], 0x05, "a Message record");
    bytes[at + 9 + 6] ^= 1;
    std::fs::write(&out, &bytes).unwrap();
    let b = Bag::open(&out).unwrap();
    let r = bagscope_reader::check::check(&b, 2, None).unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains(&format!("chunk at byte {}", ch.pos))
                && p.contains("different places or times")),
        "{:?}",
        r.problems
    );
    // A Message record's channel id changed to one no Channel defines: named.
    bytes[at + 9 + 6] ^= 1;
    let id = [bytes[at + 9], bytes[at + 10]];
    bytes[at + 9] = 0xee;
    bytes[at + 10] = 0xee;
    std::fs::write(&out, &bytes).unwrap();
    let r = bagscope_reader::check::check(&Bag::open(&out).unwrap(), 2, None).unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("undefined connection 61166")),
        "{:?}",
        r.problems
    );
    // The chunk's message indexes made unreadable (the first one's opcode changed): a warning,
    // as the tables give it, and the chunk still read whole, every message counted.
    bytes[at + 9..at + 11].copy_from_slice(&id);
    bytes[ch.index_pos as usize] = 0x7f;
    std::fs::write(&out, &bytes).unwrap();
    let b = Bag::open(&out).unwrap();
    let r = bagscope_reader::check::check(&b, 2, None).unwrap();
    let want = format!(
        "message indexes of the chunk at byte {} list 0 messages, the chunk index {}; rebuilt from the chunk",
        ch.pos,
        ch.message_count()
    );
    assert!(
        r.problems.iter().any(|p| p == &format!("warning: {want}")),
        "{:?}",
        r.problems
    );
    assert_eq!(r.messages, b.summary().message_count);
    assert!(b.tables().unwrap().warnings.contains(&want));
}

/// A binary schema (a protobuf `FileDescriptorSet` is not UTF-8) is kept byte for byte, and an
/// export to MCAP writes it unchanged (it was written as its lossy text reading before).
#[test]
fn a_binary_schema_is_exported_byte_for_byte() {
    let fds: Vec<u8> = vec![
        0x0a, 0x8c, 0x01, 0xff, 0xfe, 0x00, b'k', b'e', b'e', 0x80, 0x12,
    ];
    let f = file(&[
        schema_bytes(1, "pkg.Msg", "protobuf", &fds),
        channel(1, 1, "/pb", "protobuf"),
        message(1, 1, 10, &[0x08, 0x96, 0x01]),
    ]);
    let dir = common::temp_dir("mcap-binary-schema");
    let src = dir.join("pb.mcap");
    std::fs::write(&src, &f).unwrap();
    let bag = Bag::open(&src).unwrap();
    let c = &bag.summary().connections[0];
    assert_eq!(c.schema_data, fds);
    assert_eq!(
        (c.encoding.as_str(), c.schema_encoding.as_str()),
        ("protobuf", "protobuf")
    );
    let out = dir.join("out.mcap");
    common::bagscope(&[&"export", &src, &"-o", &out]).ok();
    let back = Bag::open(&out).unwrap();
    let c = &back.summary().connections[0];
    assert_eq!(c.schema_data, fds, "the schema written unchanged");
    assert_eq!(
        (c.datatype.as_str(), c.schema_encoding.as_str()),
        ("pkg.Msg", "protobuf")
    );
    let m = back.nth_message(0, 0).unwrap();
    assert_eq!(&*m.data, &[0x08, 0x96, 0x01]);
}

/// keelson's real protobuf recording exported to MCAP: every schema and message the same.
#[test]
fn a_protobuf_recording_exports_unchanged() {
    let src = common::corpus2_dir().join("keelson/test.mcap");
    let dir = common::temp_dir("mcap-keelson-export");
    let out = dir.join("k.mcap");
    common::bagscope(&[&"export", &src, &"-o", &out]).ok();
    let (a, b) = (Bag::open(&src).unwrap(), Bag::open(&out).unwrap());
    let schemas = |bag: &Bag| -> std::collections::BTreeMap<String, (String, Vec<u8>)> {
        bag.summary()
            .connections
            .iter()
            .map(|c| {
                let data = if c.schema_data.is_empty() {
                    c.message_definition.as_bytes().to_vec()
                } else {
                    c.schema_data.clone()
                };
                (c.topic.clone(), (c.schema_encoding.clone(), data))
            })
            .collect()
    };
    assert_eq!(schemas(&a), schemas(&b));
    assert!(a
        .summary()
        .connections
        .iter()
        .any(|c| !c.schema_data.is_empty()));
    let all = |bag: &Bag| -> Vec<(String, u64, Vec<u8>)> {
        bag.messages(&Filter::default())
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (
                    bag.summary().connections[m.conn].topic.clone(),
                    m.time_ns,
                    m.data.to_vec(),
                )
            })
            .collect()
    };
    let (x, y) = (all(&a), all(&b));
    assert_eq!(x.len(), 2172);
    assert_eq!(x, y);
}

/// The offsets of every record of `op` in the summary section of an MCAP file.
fn summary_records(f: &[u8], op: u8) -> Vec<usize> {
    // Footer: opcode, length, summary_start, summary_offset_start, crc; then the magic.
    let footer = f.len() - 8 - (1 + 8 + 8 + 8 + 4);
    let summary_start = u64::from_le_bytes(f[footer + 9..footer + 17].try_into().unwrap()) as usize;
    let mut at = summary_start;
    let mut out = Vec::new();
    while at < footer {
        let len = u64::from_le_bytes(f[at + 1..at + 9].try_into().unwrap()) as usize;
        if f[at] == op {
            out.push(at);
        }
        at += 9 + len;
    }
    out
}

/// An early Python writer put a `compressed_size` in the chunk index that is not the chunk
/// record's own length; the `mcap` package reads such files through their index. bagscope
/// uses the chunk's own length, warns once, reads every message and calls the file intact.
#[test]
fn a_chunk_index_whose_compressed_size_disagrees_with_its_chunk() {
    let d = common::temp_dir("mcap-chunk-index-size");
    let src = common::corpus_dir().join("rosbag.js/example.bag");
    for compression in ["none", "zstd"] {
        let good = d.join(format!("good-{compression}.mcap"));
        common::bagscope(&[
            &"export",
            &src,
            &"-o",
            &good,
            &"--compression",
            &compression,
            &"--chunk-size",
            &"65536",
        ])
        .ok();
        let mut f = std::fs::read(&good).unwrap();
        let indexes = summary_records(&f, 0x08);
        assert!(indexes.len() > 3, "{} chunks", indexes.len());
        for &at in &indexes {
            // After the opcode and length: start, end, chunk start, chunk length, then the
            // message index offsets (a u32 byte length), message index length, compression.
            let mut p = at + 9 + 32;
            let n = u32::from_le_bytes(f[p..p + 4].try_into().unwrap()) as usize;
            p += 4 + n + 8;
            let n = u32::from_le_bytes(f[p..p + 4].try_into().unwrap()) as usize;
            p += 4 + n;
            // compressed_size: the uncompressed size where it is compressed, a bit more where
            // it is not (both seen in the wild are "some other number").
            let unc = u64::from_le_bytes(f[p + 8..p + 16].try_into().unwrap());
            let wrong = if compression == "none" {
                unc + 454
            } else {
                unc
            };
            f[p..p + 8].copy_from_slice(&wrong.to_le_bytes());
        }
        let bad = d.join(format!("bad-{compression}.mcap"));
        std::fs::write(&bad, &f).unwrap();
        let read = |p: &std::path::Path| {
            let b = Bag::open(p).unwrap();
            let msgs: Vec<(usize, u64, Vec<u8>)> = b
                .messages(&Filter::default())
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (m.conn, m.time_ns, m.data.to_vec())
                })
                .collect();
            (b.summary().indexed, b.warnings(), msgs)
        };
        let (indexed, warnings, msgs) = read(&bad);
        let (_, good_warnings, want) = read(&good);
        assert!(good_warnings.is_empty(), "{good_warnings:?}");
        assert!(indexed, "the summary is kept");
        assert_eq!(msgs, want);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with(&format!(
                "{} chunk index record(s) give a compressed_size that is not their chunk's own",
                indexes.len()
            )),
            "{}",
            warnings[0]
        );
        let r = common::bagscope(&[&"check", &bad]);
        assert_eq!(r.code, Some(0), "{}", r.stdout);
        assert!(r.stdout.contains(": OK (1 warnings)"), "{}", r.stdout);
        assert!(!r.stdout.contains("remain"), "{}", r.stdout);
    }
}

/// Every message of a recording, as `(connection, time, bytes)`, or the first error.
fn read_all(
    bag: &bagscope_reader::Bag,
    f: &bagscope_reader::Filter,
) -> Result<Vec<(usize, u64, Vec<u8>)>, String> {
    let mut v = Vec::new();
    for m in bag.messages(f).map_err(|e| e.to_string())? {
        let m = m.map_err(|e| e.to_string())?;
        v.push((m.conn, m.time_ns, m.data.to_vec()));
    }
    Ok(v)
}

/// Reading every message chunk by chunk in file order (no tables, no merge) gives what the
/// merge of the message tables gives, message for message, for every MCAP file of the corpus
/// (the tables are used when a time window is asked for: a window from 0 is all of it).
#[test]
fn reading_chunk_by_chunk_gives_the_merge_order_on_every_corpus_mcap() {
    same_both_ways(common::corpus2_dir(), "mcap", 100, 10_000);
}

/// Reads every file with extension `ext` under `root` (below 64 MiB) both ways and compares.
fn same_both_ways(root: std::path::PathBuf, ext: &str, min_files: usize, min_messages: usize) {
    let mut files = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext)
                && std::fs::metadata(&p).unwrap().len() < 64 << 20
            {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > min_files, "{} .{ext} files", files.len());
    let (mut compared, mut messages) = (0, 0);
    for f in &files {
        let Ok(bag) = bagscope_reader::Bag::open(f) else {
            continue;
        };
        let all = read_all(&bag, &bagscope_reader::Filter::default());
        let bag = bagscope_reader::Bag::open(f).unwrap();
        let merged = read_all(
            &bag,
            &bagscope_reader::Filter {
                start_ns: Some(0),
                ..Default::default()
            },
        );
        assert_eq!(
            all.is_ok(),
            merged.is_ok(),
            "{}: {all:?} / {merged:?}",
            f.display()
        );
        if let (Ok(a), Ok(b)) = (&all, &merged) {
            assert!(
                a == b,
                "{}: {} vs {} messages, first difference at {:?}",
                f.display(),
                a.len(),
                b.len(),
                a.iter().zip(b).position(|(x, y)| x != y)
            );
            messages += a.len();
        }
        compared += 1;
    }
    assert!(
        compared > min_files && messages > min_messages,
        "{compared} files, {messages} messages"
    );
}
