//! The decoder against real bags: every message of the corpus decodes and every stored md5sum
//! matches the definition; decoded values agree with the peer reader rosbags; field series
//! and CSV rows on bags bagscope writes.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::AtomicBool;

use bagscope_reader::check::{check, DecodeCheck};
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{to_json, FieldPath, Plan, Value};
use bagscope_reader::series::{field_series, merge_rows};
use bagscope_reader::{Bag, Compression, Filter};

/// Bags whose own content is wrong, and what bagscope must say about them.
const KNOWN_BAD: &[(&str, &str)] = &[(
    // Its one connection stores an empty definition for a type that is not empty (md5sum is
    // not that of an empty message), so its messages cannot be decoded.
    "webviz/bag-with-empty-message-definition.bag",
    "stores no definition",
)];

#[test]
fn every_corpus_message_decodes_and_every_md5_matches() {
    let dir = common::corpus_dir();
    let mut decoded_bags = 0;
    for (name, exp) in common::expected() {
        if exp.get("error").is_some() {
            continue;
        }
        let Ok(bag) = Bag::open(dir.join(&name)) else {
            continue; // corpus.rs asserts which bags open
        };
        let dc = DecodeCheck::new(bag.summary(), &bag.options().msg_path);
        let hook = |ci: usize, t: u64, d: &[u8]| dc.message(ci, t, d);
        check(&bag, 2, Some(&hook)).unwrap();
        let problems = dc.summary_problems(bag.summary());
        match KNOWN_BAD.iter().find(|(n, _)| *n == name) {
            Some((_, why)) => assert!(
                problems.iter().any(|p| p.contains(why)),
                "{name}: expected a problem containing {why:?}, got {problems:?}"
            ),
            None => assert!(problems.is_empty(), "{name}: {problems:#?}"),
        }
        decoded_bags += 1;
    }
    assert!(decoded_bags >= 70, "only {decoded_bags} bags decoded");
}

fn rosbags_available() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import rosbags.rosbag1, numpy"])
        .status()
        .is_ok_and(|s| s.success())
}

fn our_json(bag: &Bag) -> Vec<serde_json::Value> {
    let s = bag.summary();
    let plans: Vec<Plan> = s
        .connections
        .iter()
        .map(|c| Plan::for_connection(c, &[]).unwrap())
        .collect();
    let mut out = Vec::new();
    for m in bag.messages(&Filter::default()).unwrap() {
        let m = m.unwrap();
        let p = &plans[m.conn];
        let mut j = String::new();
        to_json(&p.def, &p.decode(&m.data).unwrap().value, &mut j);
        out.push(serde_json::json!({
            "time_ns": m.time_ns,
            "topic": s.connections[m.conn].topic,
            "message": serde_json::from_str::<serde_json::Value>(&j).unwrap(),
        }));
    }
    out
}

#[test]
fn decoded_values_match_rosbags() {
    let dir = common::corpus_dir();
    if !rosbags_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags is not installed but CI is set: .ci/run must install it"
        );
        eprintln!("rosbags is not installed: skipping the value cross-check");
        return;
    }
    let mut bags: Vec<String> = std::fs::read_dir(dir.join("bag-reader-java"))
        .unwrap()
        .map(|e| {
            format!(
                "bag-reader-java/{}",
                e.unwrap().file_name().to_string_lossy()
            )
        })
        .filter(|n| n.ends_with(".bag"))
        .collect();
    bags.sort();
    bags.push("rosbag.js/example.bag".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/py/rosbags_json.py");
    let mut compared = 0usize;
    for name in &bags {
        let bag = Bag::open(dir.join(name)).unwrap();
        let ours = our_json(&bag);
        let out = std::process::Command::new("python3")
            .arg(script)
            .arg(dir.join(name))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: rosbags failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{name}: message counts");
        // Both read in time order; equal times may come in either order, so compare as sets
        // per time.
        let key = |v: &serde_json::Value| (v["time_ns"].as_u64().unwrap(), v["topic"].to_string());
        let mut a = ours.clone();
        let mut b = theirs.clone();
        a.sort_by_key(key);
        b.sort_by_key(key);
        for (x, y) in a.iter().zip(&b) {
            if !common::same_json(x, y) {
                // Same time and topic, other order: look for it.
                assert!(
                    b.iter().any(|z| common::same_json(x, z)),
                    "{name}: bagscope decoded\n{x}\nrosbags has no such message; nearest:\n{y}"
                );
            }
            compared += 1;
        }
    }
    assert!(compared > 8000, "compared only {compared} messages");
}

#[test]
fn constants_are_parsed_with_their_values() {
    // rosbags refuses this definition (spaces around `=`); ROS accepts it and so must we.
    let bag = Bag::open(common::corpus_dir().join("matlab_rosbag/constants.bag")).unwrap();
    let c = &bag.summary().connections[0];
    let d = MsgDef::parse(&c.datatype, &c.message_definition).unwrap();
    assert_eq!(d.md5(), c.md5sum);
    let got: Vec<(&str, &str)> = d
        .root()
        .constants
        .iter()
        .map(|k| (k.name.as_str(), k.value.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", "1"),
            ("b", "2"),
            ("c", "3"),
            ("d", "4"),
            ("e", "5"),
            ("f", "6"),
            ("g", "7"),
            ("h", "8"),
            ("fa", "1.5"),
            ("fb", "40.9"),
            ("str", "hello there"),
            ("str2", r#"this string has "quotes" and \slashes\ in it"#),
        ]
    );
    assert!(d.root().fields.is_empty());
}

#[test]
fn series_and_rows_over_a_written_bag() {
    let d = common::temp_dir("series");
    let p = d.join("s.bag");
    let wrote = common::write_fixture(&p, Compression::Lz4, 3000, 3000);
    let bag = Bag::open(&p).unwrap();
    let cancel = AtomicBool::new(false);
    let parts = std::sync::Mutex::new(0usize);
    let path = FieldPath::parse("/b.data").unwrap();
    let s = field_series(&bag, &path, None, None, 2, &cancel, &|pts| {
        *parts.lock().unwrap() += pts.len();
    })
    .unwrap();
    let mut want: Vec<(u64, f64)> = wrote
        .iter()
        .filter(|w| w.0 != 0)
        .map(|w| (w.1, f64::from_le_bytes(w.2[..8].try_into().unwrap())))
        .collect();
    want.sort_by_key(|w| w.0);
    let got: Vec<(u64, f64)> = s
        .points
        .iter()
        .map(|p| (p.time_ns, p.value.as_f64().unwrap()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        *parts.lock().unwrap(),
        want.len(),
        "increments add up to the series"
    );
    assert_eq!(s.missing, 0);
    // A time window.
    let t0 = want[100].0;
    let t1 = want[200].0;
    let w = field_series(&bag, &path, Some(t0), Some(t1), 2, &cancel, &|_| {}).unwrap();
    assert_eq!(w.points.len(), 100);
    // Rows at the union of times.
    let a = field_series(
        &bag,
        &FieldPath::parse("/a.data").unwrap(),
        None,
        None,
        2,
        &cancel,
        &|_| {},
    )
    .unwrap();
    let both: [&[bagscope_reader::series::Point]; 2] = [&a.points, &s.points];
    let rows: Vec<_> = merge_rows(&both).collect();
    assert_eq!(rows.len(), 3000);
    assert!(rows
        .iter()
        .all(|(_, r)| r.iter().filter(|v| v.is_some()).count() == 1));
    assert!(matches!(rows[0].1[0], Some(Value::F64(_))));
    // Bad paths say why.
    let e = field_series(
        &bag,
        &FieldPath::parse("/b.nope").unwrap(),
        None,
        None,
        2,
        &cancel,
        &|_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("no field"), "{e}");
}

/// `Plan::validates` (the walk without a value tree that `check` uses) says yes exactly when
/// `Plan::decode` decodes: on messages of the ROS 1 and ROS 2 corpora, and on each cut short,
/// lengthened, and with a byte changed at several places.
#[test]
fn validates_agrees_with_decode_on_real_and_damaged_messages() {
    let mut paths: Vec<std::path::PathBuf> = common::expected()
        .keys()
        .map(|k| common::corpus_dir().join(k))
        .collect();
    let exp2 = common::corpus2_dir().join("expected.json");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(exp2).unwrap()).unwrap();
    paths.extend(
        j.as_object()
            .unwrap()
            .keys()
            .filter(|k| !k.starts_with("mcap/conformance/"))
            .map(|k| common::corpus2_dir().join(k)),
    );
    let (mut checked, mut rejected) = (0u64, 0u64);
    for p in paths {
        let Ok(b) = Bag::open(&p) else { continue };
        for (ci, c) in b.summary().connections.iter().enumerate() {
            let Ok(plan) = Plan::for_connection(c, &[]) else {
                continue;
            };
            let f = Filter {
                connections: Some(vec![ci]),
                ..Default::default()
            };
            let Ok(it) = b.messages(&f) else { continue };
            for m in it.take(300).flatten() {
                let d = &m.data[..];
                let mut variants: Vec<Vec<u8>> = vec![d.to_vec(), d[..d.len() / 2].to_vec()];
                if !d.is_empty() {
                    variants.push(d[..d.len() - 1].to_vec());
                }
                let mut longer = d.to_vec();
                longer.extend_from_slice(&[0; 5]);
                variants.push(longer);
                for at in [0, 4, 8, d.len() / 3, d.len() / 2] {
                    if at + 4 <= d.len() {
                        let mut v = d.to_vec();
                        v[at..at + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
                        variants.push(v);
                    }
                }
                for v in &variants {
                    let ok = plan.decode(v).is_ok();
                    assert_eq!(
                        plan.validates(v),
                        ok,
                        "{} {} ({} bytes)",
                        p.display(),
                        c.topic,
                        v.len()
                    );
                    checked += 1;
                    rejected += u64::from(!ok);
                }
            }
        }
    }
    assert!(checked > 50_000, "only {checked} messages");
    assert!(
        rejected > 10_000,
        "only {rejected} damaged messages refused"
    );
}

#[test]
fn echo_prints_a_topic_in_time_order_and_stops_after_count() {
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let all = common::bagscope(&[&"echo", &bag, &"--json", &"-t", &"/turtle1/pose"]).ok();
    let lines: Vec<serde_json::Value> = all
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1344);
    assert!(lines.iter().all(|l| l["topic"] == "/turtle1/pose"));
    let times: Vec<u64> = lines
        .iter()
        .map(|l| l["time_ns"].as_u64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    // The turtle starts at the centre; a float32 printed in its shortest form.
    assert_eq!(lines[0]["message"]["x"].as_f64(), Some(5.5444446));
    for n in ["0", "1", "3"] {
        let out =
            common::bagscope(&[&"echo", &bag, &"--json", &"-t", &"/turtle1/pose", &"-n", &n]).ok();
        let got: Vec<&str> = out.lines().collect();
        let want: Vec<&str> = all.lines().take(n.parse().unwrap()).collect();
        assert_eq!(got, want, "-n {n}");
    }
    // The YAML form: one `---` per message.
    let yaml = common::bagscope(&[&"echo", &bag, &"-t", &"/turtle1/pose", &"--count", &"2"]).ok();
    assert_eq!(yaml.matches("\n---\n").count(), 2, "{yaml}");
    assert!(yaml.starts_with("# /turtle1/pose @ "), "{yaml}");
}
