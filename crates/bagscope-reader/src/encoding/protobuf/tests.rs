//! The protobuf decoder against descriptor sets built here byte by byte.

use super::*;

fn varint(mut n: u64) -> Vec<u8> {
    let mut v = Vec::new();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            v.push(b);
            return v;
        }
        v.push(b | 0x80);
    }
}

fn num(field: u64, n: u64) -> Vec<u8> {
    let mut v = varint(field << 3);
    v.extend(varint(n));
    v
}

fn ld(field: u64, b: &[u8]) -> Vec<u8> {
    let mut v = varint(field << 3 | 2);
    v.extend(varint(b.len() as u64));
    v.extend_from_slice(b);
    v
}

fn field(name: &str, number: u64, label: u64, ty: u64, type_name: &str) -> Vec<u8> {
    let mut f = ld(1, name.as_bytes());
    f.extend(num(3, number));
    f.extend(num(4, label));
    f.extend(num(5, ty));
    if !type_name.is_empty() {
        f.extend(ld(6, type_name.as_bytes()));
    }
    f
}

/// `package t; message M { sint32 a = 1; repeated int32 b = 2; M sub = 3;
/// enum E { OFF = 0; ON = 1; } E e = 4; }`
fn set() -> Vec<u8> {
    let mut m = ld(1, b"M");
    m.extend(ld(2, &field("a", 1, 1, 17, "")));
    m.extend(ld(2, &field("b", 2, 3, 5, "")));
    m.extend(ld(2, &field("sub", 3, 1, 11, ".t.M")));
    m.extend(ld(2, &field("e", 4, 1, 14, ".t.M.E")));
    let mut e = ld(1, b"E");
    for (name, n) in [("OFF", 0), ("ON", 1)] {
        let mut v = ld(1, name.as_bytes());
        v.extend(num(2, n));
        e.extend(ld(2, &v));
    }
    m.extend(ld(4, &e));
    let mut file = ld(2, b"t");
    file.extend(ld(4, &m));
    ld(1, &file)
}

#[test]
fn a_recursive_message_with_zigzag_packed_and_unknown_fields() {
    let (def, schema) = compile(&set(), "t.M").unwrap();
    assert_eq!(def.types.len(), 1, "M refers to itself");
    assert_eq!(def.types[0].fields[1].type_text, "repeated int32");
    // The enum's values, as constants tied to it.
    assert_eq!(def.types[0].fields[3].type_text, "enum E");
    let c: Vec<(&str, &str, &str)> = def.types[0]
        .constants
        .iter()
        .map(|c| (c.type_text.as_str(), c.name.as_str(), c.value.as_str()))
        .collect();
    assert_eq!(c, [("enum E", "OFF", "0"), ("enum E", "ON", "1")]);
    let mut msg = num(1, 5); // sint32 -3
    let mut packed = varint(1);
    packed.extend(varint(u64::MAX)); // int32 -1, sign-extended to ten bytes
    msg.extend(ld(2, &packed));
    msg.extend(num(2, 7)); // and one unpacked
    msg.extend(num(9, 5)); // unknown: skipped
    msg.extend(ld(3, &num(1, 2))); // sub { a: 1 }
    let n = schema.decode(&def, &msg).unwrap();
    let Value::Message { fields, .. } = &n.value else {
        panic!("{n:?}")
    };
    assert_eq!(fields[0].value, Value::I32(-3));
    let b: Vec<u8> = [1i32, -1, 7].iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(fields[1].value, Value::Prims(Primitive::I32, b));
    let Value::Message { fields: sub, .. } = &fields[2].value else {
        panic!()
    };
    assert_eq!(sub[0].value, Value::I32(1));
    // The sub-message's own sub-message is absent: an empty message, not an endless one.
    assert_eq!(
        sub[2].value,
        Value::Message {
            ty: 0,
            fields: vec![]
        }
    );
    // Spans: field a is the byte after its key.
    assert_eq!((fields[0].start, fields[0].end), (1, 2));
    // An empty message: every field at its default.
    let n = schema.decode(&def, &[]).unwrap();
    let Value::Message { fields, .. } = &n.value else {
        panic!()
    };
    assert_eq!(fields[0].value, Value::I32(0));
    assert_eq!(fields[1].value, Value::Prims(Primitive::I32, vec![]));
}

#[test]
fn damaged_messages_and_schemas_say_where() {
    let (def, schema) = compile(&set(), "t.M").unwrap();
    let e = schema.decode(&def, &ld(1, b"xx")).unwrap_err();
    assert_eq!((e.path.as_str(), e.offset), ("a", 0));
    assert!(e.reason.contains("wire type 2"), "{e}");
    let e = schema.decode(&def, &[0x08, 0x80]).unwrap_err();
    assert!(e.reason.contains("past the end"), "{e}");
    let e = schema
        .decode(&def, &ld(3, &[0x1a, 0x05, 0x08]))
        .unwrap_err();
    assert_eq!(e.path, "sub.sub");
    assert!(e.reason.contains("5 bytes claimed"), "{e}");
    // 200 nested levels: refused, not a stack overflow.
    let mut deep = num(1, 2);
    for _ in 0..200 {
        deep = ld(3, &deep);
    }
    let e = schema.decode(&def, &deep).unwrap_err();
    assert!(e.reason.contains("nested too deep"), "{e}");
    let e = compile(&set(), "t.Nope").unwrap_err();
    assert_eq!(e.datatype, "t.Nope");
    assert!(e.reason.contains("no message type t.Nope"), "{e}");
    assert!(compile(&set()[..10], "t.M").is_err());
    let mut unknown = ld(1, b"M");
    unknown.extend(ld(2, &field("x", 1, 1, 11, ".t.Missing")));
    let mut file = ld(2, b"t");
    file.extend(ld(4, &unknown));
    let e = compile(&ld(1, &file), "t.M").unwrap_err();
    assert!(e.reason.contains("unknown type .t.Missing"), "{e}");
}

/// `package t; message M { message Inner { int32 x = 1; } Inner in = 1; Other o = 2;
/// t.Other p = 3; }  message Other { int32 y = 1; }`, every type name relative, as protobufjs
/// writes them: resolved by protobuf's scoping (innermost first).
#[test]
fn relative_type_names_are_resolved_by_scope() {
    let mut inner = ld(1, b"Inner");
    inner.extend(ld(2, &field("x", 1, 1, 5, "")));
    let mut m = ld(1, b"M");
    m.extend(ld(2, &field("in", 1, 1, 11, "Inner")));
    m.extend(ld(2, &field("o", 2, 1, 11, "Other")));
    m.extend(ld(2, &field("p", 3, 1, 11, "t.Other")));
    m.extend(ld(3, &inner));
    let mut other = ld(1, b"Other");
    other.extend(ld(2, &field("y", 1, 1, 5, "")));
    let mut file = ld(2, b"t");
    file.extend(ld(4, &m));
    file.extend(ld(4, &other));
    let (def, schema) = compile(&ld(1, &file), "t.M").unwrap();
    let names: Vec<&str> = def.types.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t.M", "t.M.Inner", "t.Other"]);
    // in { x: 7 }, o { y: 8 }, p { y: 9 }
    let msg = [ld(1, &num(1, 7)), ld(2, &num(1, 8)), ld(3, &num(1, 9))].concat();
    let node = schema.decode(&def, &msg).unwrap();
    let text = format!("{node:?}");
    for v in ["I32(7)", "I32(8)", "I32(9)"] {
        assert!(text.contains(v), "{v} in {text}");
    }
    // A name no scope has is still unknown.
    let mut bad = ld(1, b"M");
    bad.extend(ld(2, &field("z", 1, 1, 11, "Nowhere")));
    let mut file = ld(2, b"t");
    file.extend(ld(4, &bad));
    let e = compile(&ld(1, &file), "t.M").unwrap_err();
    assert!(e.reason.contains("unknown type Nowhere"), "{e}");
}
