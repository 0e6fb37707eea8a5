//! MCAP encodings beyond ROS: protobuf channels decoded from their FileDescriptorSet, held
//! against Google's protobuf library (`tests/py/protobuf_json.py`) on keelson's real recording
//! and on a file of every field kind written by `tests/py/protobuf_fixture.py`, with CSV over
//! protobuf fields and damaged messages (errors, never a panic); JSON channels decoded from
//! their JSON Schema, held against Python's `json`.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use bagscope_reader::encoding::Plan;
use bagscope_reader::Bag;

fn protobuf_available() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import google.protobuf, mcap"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python's protobuf is not installed but CI is set: .ci/run must install it"
        );
        eprintln!("python's protobuf is not installed: skipping the protobuf cross-check");
    }
    ok
}

fn python(args: &[&dyn AsRef<std::ffi::OsStr>]) -> String {
    let o = std::process::Command::new("python3")
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Maps (lists of {key, value}) sorted by key: protobuf does not keep a map's order.
fn normalise(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Array(a) => {
            a.iter_mut().for_each(normalise);
            let is_map = !a.is_empty()
                && a.iter().all(|e| {
                    e.as_object().is_some_and(|o| {
                        o.len() == 2 && o.contains_key("key") && o.contains_key("value")
                    })
                });
            if is_map {
                a.sort_by(|x, y| x["key"].to_string().cmp(&y["key"].to_string()));
            }
        }
        serde_json::Value::Object(o) => o.values_mut().for_each(normalise),
        _ => {}
    }
}

fn lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            normalise(&mut v);
            v
        })
        .collect()
}

/// `bagscope echo --json` of `file` against Google's decoder, message by message.
fn cross_check(file: &Path) -> usize {
    let ours = lines(&common::bagscope(&[&"echo", &file, &"--json"]).ok());
    let theirs = lines(&python(&[&"tests/py/protobuf_json.py", &file]));
    assert_eq!(ours.len(), theirs.len());
    let key = |v: &serde_json::Value| (v["time_ns"].as_u64().unwrap(), v["topic"].to_string());
    let mut a = ours.clone();
    let mut b = theirs.clone();
    a.sort_by_key(key);
    b.sort_by_key(key);
    for (x, y) in a.iter().zip(&b) {
        assert!(common::same_json(x, y), "ours:   {x}\ntheirs: {y}");
    }
    a.len()
}

#[test]
fn keelson_protobuf_messages_decode_as_google_decodes_them() {
    let file = common::corpus2_dir().join("keelson/test.mcap");
    let bag = Bag::open(&file).unwrap();
    let c = &bag.summary().connections[0];
    let (plan, source) = Plan::for_connection_with_source(c, &[]).unwrap();
    assert_eq!(
        plan.def.types[0].name,
        "keelson.primitives.TimestampedBytes"
    );
    assert_eq!(
        source,
        bagscope_reader::definition::sources::DefSource::Recording
    );
    // `gen` writes ROS 1 and CDR loaders: protobuf types are left out, said so.
    let dir = common::temp_dir("encodings-gen");
    let ran = common::bagscope(&[&"gen", &file, &"--lang", &"rust", &"-o", &dir.join("out")]);
    assert_ne!(ran.code, Some(0));
    assert!(
        ran.stderr.contains("left out: protobuf-encoded"),
        "{}",
        ran.stderr
    );
    if !protobuf_available() {
        return;
    }
    assert_eq!(cross_check(&file), 2172);
}

/// protobufjs writes field type names relative to their scope (`Mode`, `CountsEntry`,
/// `bagscope.test.Inner`, `test.Inner`), which descriptor.proto allows: resolved by protobuf's
/// scoping, the messages decode as Google's library (which resolves them the same way) decodes
/// them.
#[test]
fn relative_protobuf_type_names_decode_as_google_decodes_them() {
    if !protobuf_available() {
        return;
    }
    let dir = common::temp_dir("protobuf-relative");
    let file = dir.join("relative.mcap");
    python(&[&"tests/py/protobuf_fixture.py", &file, &"--relative"]);
    assert_eq!(cross_check(&file), 40);
}

#[test]
fn every_protobuf_field_kind_decodes_as_google_decodes_it() {
    if !protobuf_available() {
        return;
    }
    let dir = common::temp_dir("protobuf-kinds");
    let file = dir.join("all.mcap");
    python(&[&"tests/py/protobuf_fixture.py", &file]);
    assert_eq!(cross_check(&file), 40);
    // A field as a series and as CSV: int32 (negative, a 10-byte varint), a nested double.
    // The 8 messages without `inner` leave its cell empty and say so.
    let ran = common::bagscope(&[&"csv", &file, &"/all.i32", &"/all.inner.x", &"/all.si64"]);
    assert!(
        ran.stderr.contains("/all.inner.x: absent from 8 messages"),
        "{}",
        ran.stderr
    );
    let csv = ran.stdout;
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 40, "{csv}");
    for (k, r) in rows.iter().enumerate() {
        let k = k as i64;
        if k % 5 == 4 {
            // Every field at its default; the sub-message absent.
            assert_eq!(r[1..], ["0", "", "0"], "row {k}");
            continue;
        }
        assert_eq!(r[1].parse::<i64>().unwrap(), -5 * k, "row {k}: {r:?}");
        let x = r[2].parse::<f64>().unwrap();
        assert!((x - k as f64 / 3.0).abs() < 1e-12, "row {k}: {r:?}");
        assert_eq!(r[3].parse::<i64>().unwrap(), -(k.pow(7)), "row {k}: {r:?}");
    }
    // Damaged messages: an error naming the place, or a value; never a panic.
    let bag = Bag::open(&file).unwrap();
    let plan = Plan::for_connection(&bag.summary().connections[0], &[]).unwrap();
    let m = bag.nth_message(0, 1).unwrap().data.to_vec();
    let e = plan.decode(&m[..m.len() - 3]).unwrap_err();
    assert!(e.to_string().contains("at byte"), "{e}");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..20_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut d = m.clone();
        let i = (seed % d.len() as u64) as usize;
        d[i] = (seed >> 32) as u8;
        let cut = ((seed >> 40) as usize) % (d.len() + 1);
        let _ = plan.decode(&d[..cut.max(i + 1).min(d.len())]);
        assert_eq!(plan.validates(&d), plan.decode(&d).is_ok());
    }
}

/// JSON channels described by a JSON Schema (lichtblick's mouse events): decoded as the JSON
/// reads (Python's `json` on the mcap package's messages), and a field as CSV under `/mouse`
/// though the topic is `mouse`.
#[test]
fn json_messages_decode_from_their_json_schema() {
    let file = common::corpus2_dir().join("lichtblick/example.mcap");
    let ours = lines(&common::bagscope(&[&"echo", &file, &"--json"]).ok());
    assert_eq!(ours.len(), 111);
    let script = "import json,sys\nfrom mcap.reader import make_reader\nfor s,c,m in make_reader(open(sys.argv[1],'rb')).iter_messages(log_time_order=True):\n    print(json.dumps({'time_ns': m.log_time, 'topic': c.topic, 'message': json.loads(m.data)}))";
    let theirs = lines(&python(&[&"-c", &script, &file]));
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(common::same_json(a, b), "ours:   {a}\ntheirs: {b}");
    }
    let csv = common::bagscope(&[&"csv", &file, &"/mouse.clientX"]).ok();
    let xs: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    let want: Vec<f64> = theirs
        .iter()
        .map(|v| v["message"]["clientX"].as_f64().unwrap())
        .collect();
    assert_eq!(xs, want);
}
