//! `foxglove.CompressedVideo` as protobuf, written by hand (four fields, one nested
//! timestamp): its `FileDescriptorSet` for an MCAP schema and a message's bytes, as Foxglove's
//! own writers make them. The tests and the demo write video recordings with them.

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    tag(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn int(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, 0);
    varint(out, v);
}

/// A `FieldDescriptorProto` of an optional field.
fn field(name: &str, number: u64, ty: u64, type_name: Option<&str>) -> Vec<u8> {
    let mut f = Vec::new();
    bytes(&mut f, 1, name.as_bytes());
    int(&mut f, 3, number);
    int(&mut f, 4, 1); // LABEL_OPTIONAL
    int(&mut f, 5, ty);
    if let Some(t) = type_name {
        bytes(&mut f, 6, t.as_bytes());
    }
    f
}

fn file(name: &str, package: &str, deps: &[&str], message: &str, fields: &[Vec<u8>]) -> Vec<u8> {
    let mut m = Vec::new();
    bytes(&mut m, 1, message.as_bytes());
    for f in fields {
        bytes(&mut m, 2, f);
    }
    let mut fd = Vec::new();
    bytes(&mut fd, 1, name.as_bytes());
    bytes(&mut fd, 2, package.as_bytes());
    for d in deps {
        bytes(&mut fd, 3, d.as_bytes());
    }
    bytes(&mut fd, 4, &m);
    bytes(&mut fd, 12, b"proto3");
    fd
}

/// The `FileDescriptorSet` of `foxglove.CompressedVideo` (with `google.protobuf.Timestamp`).
pub fn compressed_video_descriptor() -> Vec<u8> {
    let ts = file(
        "google/protobuf/timestamp.proto",
        "google.protobuf",
        &[],
        "Timestamp",
        &[field("seconds", 1, 3, None), field("nanos", 2, 5, None)],
    );
    let cv = file(
        "foxglove/CompressedVideo.proto",
        "foxglove",
        &["google/protobuf/timestamp.proto"],
        "CompressedVideo",
        &[
            field("timestamp", 1, 11, Some(".google.protobuf.Timestamp")),
            field("frame_id", 2, 9, None),
            field("data", 3, 12, None),
            field("format", 4, 9, None),
        ],
    );
    let mut set = Vec::new();
    bytes(&mut set, 1, &ts);
    bytes(&mut set, 1, &cv);
    set
}

/// A `foxglove.CompressedVideo` message's bytes.
pub fn compressed_video(stamp_ns: u64, frame_id: &str, data: &[u8], format: &str) -> Vec<u8> {
    let mut ts = Vec::new();
    int(&mut ts, 1, stamp_ns / 1_000_000_000);
    int(&mut ts, 2, stamp_ns % 1_000_000_000);
    let mut m = Vec::new();
    bytes(&mut m, 1, &ts);
    bytes(&mut m, 2, frame_id.as_bytes());
    bytes(&mut m, 3, data);
    bytes(&mut m, 4, format.as_bytes());
    m
}
