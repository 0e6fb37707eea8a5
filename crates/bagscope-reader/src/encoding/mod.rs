//! Message encodings: turning a message's bytes into values, from its definition.
//!
//! A [`Plan`] compiled once per connection decodes a message into a tree of [`Node`]s (values
//! with the byte range they came from), and a [`FieldPath`] compiles against a plan into an
//! [`Extractor`] that reads one value per message without building the tree.
//!
//! Two encodings share one decoder, as they share their structure (fields in order, arrays as
//! a u32 count then elements, fixed arrays without count):
//! - ROS 1 serialization: little endian, packed, strings a u32 length and the bytes;
//! - CDR ([`cdr`], ROS 2): a 4-byte encapsulation header giving the byte order, every value
//!   aligned to its size counted from the end of that header, strings counting their NUL.

pub mod base64;
pub mod cdr;
mod convert;
mod decoder;
mod extract;
pub mod json;
pub mod migrate;
mod path;
mod plan;
pub mod protobuf;
mod skip;
mod text;
pub mod to_ros1;
pub mod to_ros2;
mod value;

use cdr::prim_align;
use decoder::Decoder;

pub use decoder::{replay, Build};

pub use extract::Extractor;
pub(crate) use extract::TimePart;
pub use path::{leaf_paths, path_topic, FieldPath, Segment};
pub use plan::{Plan, Wire};
pub use text::{to_json, to_yaml};
pub(crate) use value::read_prim;
pub use value::{escape_bytes, prim_value, Node, Value};

/// md5sum of an empty definition (`std_msgs/Empty`).
pub const EMPTY_MD5: &str = "d41d8cd98f00b204e9800998ecf8427e";

/// Most elements an array of zero-sized elements may claim (they take no bytes to check).
const MAX_EMPTY_ELEMENTS: u64 = 1 << 20;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::definition::msg::Dialect;
    use crate::definition::msg::MsgDef;

    fn plan(text: &str) -> Plan {
        Plan::new(MsgDef::parse("t/T", text).unwrap())
    }

    #[test]
    fn decode_and_extract() {
        let p = plan(
            "string name\nfloat64[] xs\nP[2] ps\nuint8[] raw\n\
             ================\nMSG: t/P\nint32 a\nfloat32 b\n",
        );
        let mut m = Vec::new();
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(b"ab\xff");
        m.extend_from_slice(&2u32.to_le_bytes());
        m.extend_from_slice(&1.5f64.to_le_bytes());
        m.extend_from_slice(&(-2.5f64).to_le_bytes());
        for (a, b) in [(7i32, 0.25f32), (-9, 4.0)] {
            m.extend_from_slice(&a.to_le_bytes());
            m.extend_from_slice(&b.to_le_bytes());
        }
        m.extend_from_slice(&1u32.to_le_bytes());
        m.push(200);
        let n = p.decode(&m).unwrap();
        let mut j = String::new();
        to_json(&p.def, &n.value, &mut j);
        assert_eq!(
            j,
            r#"{"name": "ab\\xff", "xs": [1.5, -2.5], "ps": [{"a": 7, "b": 0.25}, {"a": -9, "b": 4.0}], "raw": "yA=="}"#
        );
        let ex = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments);
        assert_eq!(ex("xs[-1]").unwrap().extract(&m), Some(Value::F64(-2.5)));
        assert_eq!(ex("ps[1].a").unwrap().extract(&m), Some(Value::I32(-9)));
        assert_eq!(ex("raw[0]").unwrap().extract(&m), Some(Value::U8(200)));
        assert_eq!(ex("xs[5]").unwrap().extract(&m), None);
        assert!(ex("name").is_err());
        assert!(ex("xs").is_err());
        assert!(ex("ps[2].a").is_err());
        assert!(ex("nope").is_err());
        // Short and over-long messages are errors with a place.
        let e = p.decode(&m[..m.len() - 1]).unwrap_err();
        assert_eq!(e.path, "raw");
        let mut long = m.clone();
        long.push(0);
        assert!(p.decode(&long).unwrap_err().reason.contains("trailing"));
        let mut absurd = m.clone();
        absurd[7..11].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(p.decode(&absurd).unwrap_err().reason.contains("cannot fit"));
    }

    #[test]
    fn paths() {
        let p = FieldPath::parse("/imu/data.orientation.x").unwrap();
        assert_eq!(p.topic, "/imu/data");
        assert_eq!(p.to_string(), "/imu/data.orientation.x");
        let p = FieldPath::parse("/tf.transforms[-1].transform.translation.x").unwrap();
        assert_eq!(p.segments[1], Segment::Index(-1));
        assert!(FieldPath::parse("/a.b[").is_err());
        assert!(FieldPath::parse("/a..b").is_err());
    }

    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
        ] {
            assert_eq!(super::base64::encode(i.as_bytes()), o);
            assert_eq!(super::base64::decode(o.as_bytes()).unwrap(), i.as_bytes());
        }
        assert_eq!(super::base64::decode(b"Zm9v\nYg").unwrap(), b"foob");
        assert!(super::base64::decode(b"Zm*v").is_none());
    }

    #[test]
    fn time_duration_bool_and_aliases() {
        let p = plan("time t\nduration d\nbool b\nbyte y\nchar c\nint16 s\nuint64 u\n");
        let mut m = Vec::new();
        m.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        m.extend_from_slice(&5u32.to_le_bytes());
        m.extend_from_slice(&(-2i32).to_le_bytes());
        m.extend_from_slice(&(-500i32).to_le_bytes());
        m.extend_from_slice(&[1, 0xff, 0xff]);
        m.extend_from_slice(&(-3i16).to_le_bytes());
        m.extend_from_slice(&u64::MAX.to_le_bytes());
        let n = p.decode(&m).unwrap();
        let mut j = String::new();
        to_json(&p.def, &n.value, &mut j);
        assert_eq!(
            j,
            r#"{"t": {"secs": 1700000000, "nsecs": 5}, "d": {"secs": -2, "nsecs": -500}, "b": true, "y": -1, "c": 255, "s": -3, "u": 18446744073709551615}"#
        );
        let Value::Message { fields, .. } = &n.value else {
            panic!("not a message")
        };
        // Byte ranges of each field, for the raw view.
        assert_eq!((fields[0].start, fields[0].end), (0, 8));
        assert_eq!((fields[2].start, fields[2].end), (16, 17));
        let ex = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments).unwrap();
        assert_eq!(
            ex("t").extract(&m).and_then(|v| v.as_f64()),
            Some(1_700_000_000.000_000_005)
        );
        assert_eq!(ex("y").extract(&m), Some(Value::I8(-1)));
        // A time's or duration's halves by name, as echo prints them.
        assert_eq!(ex("t.secs").extract(&m), Some(Value::U32(1_700_000_000)));
        assert_eq!(ex("t.nsecs").extract(&m), Some(Value::U32(5)));
        assert_eq!(ex("d.secs").extract(&m), Some(Value::I32(-2)));
        assert_eq!(ex("d.nsec").extract(&m), Some(Value::I32(-500)));
        assert_eq!(ex("d.nsecs").extract_decoded(&m), Some(Value::I32(-500)));
        let err = |s: &str| {
            let e = Extractor::new(&p, &FieldPath::parse(s).unwrap().segments).unwrap_err();
            assert_eq!(e.path, format!(".{s}"), "the error names the path");
            e.to_string()
        };
        assert_eq!(
            err("t.x"),
            ".t is a time: its fields are secs and nsecs, not \"x\""
        );
        assert_eq!(err("s.x"), ".s is an int16, it has no field \"x\"");
        assert_eq!(
            err("t.secs.x"),
            ".t.secs is a uint32, it has no field \"x\""
        );
    }

    #[test]
    fn huge_fixed_arrays_fail_cleanly_without_allocating() {
        // 2^61 float64s: the byte count overflows usize.
        let p = plan("float64[2305843009213693952] huge\nint32 after\n");
        let e = p.decode(&[0u8; 64]).unwrap_err();
        assert_eq!(e.path, "huge");
        assert!(e.reason.contains("cannot fit"), "{e:?}");
        // The field after it can not be located either; extracting says so with None.
        let ex = Extractor::new(&p, &FieldPath::parse("after").unwrap().segments).unwrap();
        assert_eq!(ex.extract(&[0u8; 64]), None);
        // A fixed array of a nested fixed-size type.
        let p = plan("P[4000000000] ps\n================\nMSG: t/P\nfloat64 x\nfloat64 y\n");
        assert!(p.decode(&[0u8; 16]).is_err());
        let ex = Extractor::new(&p, &FieldPath::parse("ps[-1].y").unwrap().segments).unwrap();
        assert_eq!(ex.extract(&[0u8; 16]), None);
        // A million-element array of empty messages claims no bytes, so it is bounded by count.
        let p = plan("E[] es\n================\nMSG: t/E\n");
        assert!(p
            .decode(&u32::MAX.to_le_bytes())
            .unwrap_err()
            .reason
            .contains("cannot fit"));
        let mut ok = 3u32.to_le_bytes().to_vec();
        assert!(p.decode(&ok).is_ok());
        ok.push(0);
        assert!(p.decode(&ok).is_err());
    }

    #[test]
    fn errors_name_the_field_path_and_offset() {
        let p = plan("int32 a\nP[] ps\n================\nMSG: t/P\nstring name\nfloat64 v\n");
        let mut m = Vec::new();
        m.extend_from_slice(&1i32.to_le_bytes());
        m.extend_from_slice(&2u32.to_le_bytes());
        m.extend_from_slice(&1u32.to_le_bytes());
        m.push(b'x');
        m.extend_from_slice(&1.0f64.to_le_bytes());
        // The second element's string claims 100 bytes.
        m.extend_from_slice(&100u32.to_le_bytes());
        m.extend_from_slice(b"abc");
        m.extend_from_slice(&[0u8; 8]);
        let e = p.decode(&m).unwrap_err();
        assert_eq!(e.path, "ps[1].name");
        assert_eq!(e.offset, 25);
        assert!(e.reason.contains("needs 100 bytes"), "{e:?}");
        // Extraction past the damage is None, before it is a value.
        let ex = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments).unwrap();
        assert_eq!(ex("ps[0].v").extract(&m), Some(Value::F64(1.0)));
        assert_eq!(ex("ps[1].v").extract(&m), None);
        assert_eq!(ex("ps[-2].v").extract(&m), Some(Value::F64(1.0)));
    }

    #[test]
    fn strings_that_are_not_utf8_are_escaped_not_dropped() {
        let p = plan("string s\n");
        let mut m = 4u32.to_le_bytes().to_vec();
        m.extend_from_slice(b"a\x00\xfe\"");
        let n = p.decode(&m).unwrap();
        assert_eq!(
            n.value,
            Value::Message {
                ty: 0,
                fields: vec![Node {
                    value: Value::String(b"a\x00\xfe\"".to_vec()),
                    start: 0,
                    end: 8
                }]
            }
        );
        let mut j = String::new();
        to_json(&p.def, &n.value, &mut j);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        let s = v["s"].as_str().unwrap();
        assert!(
            s.starts_with('a') && s.contains("\\xfe") && s.ends_with('"'),
            "{s}"
        );
    }

    /// A CDR message of a ROS 2 definition with every alignment case, little and big endian.
    /// `d` of a CDR case cut one byte short of it: nothing.
    fn x_cut(plan: &Plan, data: &[u8]) -> Option<Value> {
        let fp = FieldPath::parse("/t.d").unwrap();
        let x = Extractor::new(plan, &fp.segments).unwrap();
        assert_eq!(x.extract(&data[..data.len() - 1]), None);
        x.extract(data)
    }

    fn cdr_case(be: bool) -> Vec<u8> {
        let mut b: Vec<u8> = vec![0, if be { 0 } else { 1 }, 0, 0];
        let put = |b: &mut Vec<u8>, le: &[u8]| {
            if be {
                b.extend(le.iter().rev());
            } else {
                b.extend_from_slice(le);
            }
        };
        b.push(0x7f); // int8 a: rel 0
        b.extend_from_slice(&[0; 7]); // pad to 8
        put(&mut b, &2.5f64.to_le_bytes()); // float64 b: rel 8
        put(&mut b, &3u32.to_le_bytes()); // string s: rel 16
        b.extend_from_slice(b"hi\0");
        b.push(0); // pad to 24
        put(&mut b, &2u32.to_le_bytes()); // int32[<=3] v: count
        put(&mut b, &(-7i32).to_le_bytes());
        put(&mut b, &9i32.to_le_bytes());
        put(&mut b, &2u32.to_le_bytes()); // string<=5 t: rel 36
        b.extend_from_slice(b"a\0");
        put(&mut b, &1u16.to_le_bytes()); // uint16[2] f: rel 42
        put(&mut b, &2u16.to_le_bytes());
        b.extend_from_slice(&[0; 2]); // pad to 48
        put(&mut b, &5i32.to_le_bytes()); // int32 d: rel 48
        b
    }

    const CDR_DEF: &str = "int8 a\nfloat64 b\nstring s\nint32[<=3] v\nstring<=5 t\nuint16[2] f\nint32 d 5\nint32 C=3\n";

    #[test]
    fn cdr_little_and_big_endian_with_alignment() {
        let def = MsgDef::parse_dialect("t/msg/T", CDR_DEF, Dialect::Ros2).unwrap();
        assert_eq!(def.root().constants.len(), 1);
        let plan = Plan::new_cdr(def);
        for be in [false, true] {
            let data = cdr_case(be);
            let n = plan.decode(&data).unwrap();
            let Value::Message { fields, .. } = &n.value else {
                panic!()
            };
            assert_eq!(fields[0].value, Value::I8(0x7f));
            assert_eq!(fields[1].value, Value::F64(2.5));
            assert_eq!(
                (fields[1].start, fields[1].end),
                (12, 20),
                "spans count the header"
            );
            assert_eq!(fields[2].value, Value::String(b"hi".to_vec()));
            assert_eq!(fields[3].value.element(1).map(|e| e.0), Some(Value::I32(9)));
            assert_eq!(fields[4].value, Value::String(b"a".to_vec()));
            assert_eq!(fields[5].value.element(1).map(|e| e.0), Some(Value::U16(2)));
            assert_eq!(fields[6].value, Value::I32(5));
            let ex = |p: &str| {
                let fp = FieldPath::parse(&format!("/t.{p}")).unwrap();
                Extractor::new(&plan, &fp.segments).unwrap().extract(&data)
            };
            assert_eq!(ex("b"), Some(Value::F64(2.5)));
            assert_eq!(ex("v[-1]"), Some(Value::I32(9)));
            assert_eq!(ex("d"), Some(Value::I32(5)));
            // The walk to the field gives what decoding the whole message gives, for every
            // path; a message cut before the field gives nothing.
            for p in [
                "a", "b", "v[0]", "v[1]", "v[-2]", "v[2]", "f[0]", "f[-1]", "d",
            ] {
                let fp = FieldPath::parse(&format!("/t.{p}")).unwrap();
                let x = Extractor::new(&plan, &fp.segments).unwrap();
                assert_eq!(x.extract(&data), x.extract_decoded(&data), "{p}");
                for cut in 0..data.len() {
                    if let Some(v) = x.extract(&data[..cut]) {
                        assert_eq!(Some(v), x.extract_decoded(&data), "{p} cut at {cut}");
                    }
                }
            }
            assert_eq!(ex("d"), ex("d").and(x_cut(&plan, &data)));
        }
        // Truncated: a clear error with the field and offset, never a panic.
        let data = cdr_case(false);
        for cut in 0..data.len() {
            assert!(plan.decode(&data[..cut]).is_err());
        }
        // An unknown representation is refused.
        let mut bad = data.clone();
        bad[1] = 2;
        let e = plan.decode(&bad).unwrap_err();
        assert!(e.reason.contains("not plain CDR"), "{e}");
    }

    #[test]
    fn ros2_empty_message_is_one_byte_and_names_normalize() {
        let def = MsgDef::parse_dialect("std_msgs/msg/Empty", "", Dialect::Ros2).unwrap();
        let plan = Plan::new_cdr(def);
        plan.decode(&[0, 1, 0, 0, 0, 0, 0, 0]).unwrap();
        let text = "builtin_interfaces/Time stamp\nHeader h\n================================================================================\nMSG: builtin_interfaces/msg/Time\nint32 sec\nuint32 nanosec\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
        let def = MsgDef::parse_dialect("a/msg/B", text, Dialect::Ros2).unwrap();
        assert_eq!(def.types.len(), 3);
        // `byte` is an unsigned octet in ROS 2, signed in ROS 1.
        let d2 = MsgDef::parse_dialect("a/B", "byte x", Dialect::Ros2).unwrap();
        let d1 = MsgDef::parse("a/B", "byte x").unwrap();
        assert_ne!(d1.root().fields[0].ty, d2.root().fields[0].ty);
    }
}
