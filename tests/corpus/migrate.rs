//! `export --migrate DIR`: messages re-encoded into newer definitions of their types (fields
//! by name, lossless widening, added fields at defaults, dropped fields reported), types that
//! cannot migrate named and left as recorded; ROS 1 and CDR.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::AtomicBool;

use bagscope_ops::tables::export::{export, ExportOptions, OutputFormat};
use bagscope_reader::encoding::{Plan, Value};
use bagscope_reader::{Bag, BagWriter, ConnectionSpec, Filter, WriteOptions};

fn fields(bag: &Bag, topic: &str, n: usize) -> Vec<(String, Value)> {
    let s = bag.summary();
    let ci = s.topic(topic).unwrap().connections[0];
    let c = &s.connections[ci];
    let plan = Plan::for_connection(c, &[]).unwrap();
    let m = bag.nth_message(ci, n).unwrap();
    let v = plan.decode(&m.data).unwrap();
    let Value::Message { ty, fields } = v.value else {
        panic!()
    };
    plan.def.types[ty]
        .fields
        .iter()
        .zip(fields)
        .map(|(f, n)| (f.name.clone(), n.value))
        .collect()
}

#[test]
fn ros1_messages_migrate_to_a_newer_definition() {
    let d = common::temp_dir("migrate1");
    let src = d.join("old.bag");
    let old_def = "int32 value\nfloat32 temp\nstring name\nuint8[] raw\nHeader header\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
    let md5 = bagscope_reader::definition::msg::MsgDef::parse("my_pkg/Reading", old_def)
        .unwrap()
        .md5();
    let mut w = BagWriter::create(&src, WriteOptions::default()).unwrap();
    let a = w.add_connection(ConnectionSpec {
        topic: "/reading".into(),
        datatype: "my_pkg/Reading".into(),
        md5sum: md5,
        message_definition: old_def.into(),
        ..Default::default()
    });
    let other_def = "float64 x\n";
    let b = w.add_connection(ConnectionSpec {
        topic: "/other".into(),
        datatype: "my_pkg/Other".into(),
        md5sum: bagscope_reader::definition::msg::MsgDef::parse("my_pkg/Other", other_def)
            .unwrap()
            .md5(),
        message_definition: other_def.into(),
        ..Default::default()
    });
    for i in 0..10u32 {
        let mut m = Vec::new();
        m.extend_from_slice(&(-(i as i32) * 1000).to_le_bytes());
        m.extend_from_slice(&(i as f32 * 0.5).to_le_bytes());
        m.extend_from_slice(&5u32.to_le_bytes());
        m.extend_from_slice(b"hello");
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(&[1, 2, 3]);
        m.extend_from_slice(&i.to_le_bytes()); // seq
        m.extend_from_slice(&[0; 8]); // stamp
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(b"map");
        w.write(a, 1_000 + u64::from(i), &m).unwrap();
        w.write(
            b,
            1_000 + u64::from(i),
            &(f64::from(i) + 0.25).to_le_bytes(),
        )
        .unwrap();
    }
    w.finish().unwrap();
    // The newer definitions, as in a workspace: value widened, temp widened, raw dropped,
    // quality added; Other.x narrowed (cannot migrate).
    let ws = d.join("ws");
    std::fs::create_dir_all(ws.join("src/my_pkg/msg")).unwrap();
    std::fs::write(
        ws.join("src/my_pkg/msg/Reading.msg"),
        "Header header\nint64 value\nfloat64 temp\nstring name\nuint8 quality\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/my_pkg/msg/Other.msg"), "int32 x\n").unwrap();
    let bag = Bag::open(&src).unwrap();
    let out = d.join("new.bag");
    let r = export(
        &bag,
        &out,
        &ExportOptions {
            migrate: Some(ws.clone()),
            format: Some(OutputFormat::Ros1Bag),
            ..Default::default()
        },
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("my_pkg/Reading migrated")
            && n.contains("quality")
            && n.contains("raw")),
        "{:?}",
        r.notes
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("my_pkg/Other not migrated") && n.contains("x")),
        "{:?}",
        r.notes
    );
    let new = Bag::open(&out).unwrap();
    assert_eq!(new.summary().message_count, 20);
    let f = fields(&new, "/reading", 3);
    let names: Vec<&str> = f.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["header", "value", "temp", "name", "quality"]);
    assert_eq!(f[1].1, Value::I64(-3000));
    assert_eq!(f[2].1, Value::F64(1.5));
    assert_eq!(f[3].1, Value::String(b"hello".to_vec()));
    assert_eq!(f[4].1, Value::U8(0));
    // The header came across (seq kept, ROS 1).
    let Value::Message { fields: h, .. } = &f[0].1 else {
        panic!()
    };
    assert_eq!(h[0].value, Value::U32(3));
    // The new md5sum is the new definition's; the other type is unchanged.
    let s = new.summary();
    let c = &s.connections[s.topic("/reading").unwrap().connections[0]];
    assert!(Plan::for_connection(c, &[]).unwrap().md5_matches(&c.md5sum));
    // Worked out by hand as ROS 1 does (gentools): the md5 of the definition's text with each
    // message type replaced by its own md5sum (std_msgs/Header's is well known).
    let header_md5 = "2176decaecbce78abc3b96ef049fabed";
    let text =
        format!("{header_md5} header\nint64 value\nfloat64 temp\nstring name\nuint8 quality");
    assert_eq!(c.md5sum, format!("{:x}", md5::compute(text)));
    assert_eq!(fields(&new, "/other", 2)[0].1, Value::F64(2.25));
    let dc = bagscope_reader::check::DecodeCheck::new(s, &[]);
    let hook = |ci: usize, t: u64, d: &[u8]| dc.message(ci, t, d);
    let rep = bagscope_reader::check::check(&new, 2, Some(&hook)).unwrap();
    assert!(
        rep.problems.is_empty() && dc.summary_problems(s).is_empty(),
        "{:?}",
        rep.problems
    );
    let _ = Filter::default();
}

#[test]
fn cdr_messages_migrate_too() {
    let d = common::temp_dir("migrate2");
    let dir = d.join("msgs");
    std::fs::create_dir_all(dir.join("std_msgs/msg")).unwrap();
    std::fs::write(
        dir.join("std_msgs/msg/String.msg"),
        "string data\nuint32 count\n",
    )
    .unwrap();
    let bag = Bag::open(common::corpus2_dir().join("rosbag2/humble_talker")).unwrap();
    let out = d.join("talker.mcap");
    let r = export(
        &bag,
        &out,
        &ExportOptions {
            migrate: Some(dir),
            ..Default::default()
        },
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("std_msgs/msg/String migrated")),
        "{:?}",
        r.notes
    );
    let new = Bag::open(&out).unwrap();
    let f = fields(&new, "/topic", 0);
    assert_eq!(f[0].1, Value::String(b"Hello, world! 0".to_vec()));
    assert_eq!(f[1].1, Value::U32(0));
    // /rosout (rcl_interfaces/Log) has no newer definition there: copied as recorded.
    assert_eq!(new.summary().topic("/rosout").unwrap().message_count, 10);
}
