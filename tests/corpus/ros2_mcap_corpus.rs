//! The real ROS 2 and MCAP corpus (`../shared/bags2`): every rosbag2 directory, single storage
//! file and standalone MCAP opens with the counts, times and message bytes that independent
//! readers saw (`expected.json`); the decoded messages of `expected_decoded.jsonl` match field
//! by field; the MCAP conformance suite gives exactly the messages its `.json` files list.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::collections::{BTreeMap, HashMap};

use bagscope_reader::encoding::{Plan, Value as V};
use bagscope_reader::Bag;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn sha(b: &[u8]) -> String {
    let d = Sha256::digest(b);
    d.iter().map(|x| format!("{x:02x}")).collect()
}

fn load_expected() -> serde_json::Map<String, Value> {
    let p = common::corpus2_dir().join("expected.json");
    match serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("parse") {
        Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

#[test]
fn every_ros2_and_mcap_recording_matches_expected_json() {
    let dir = common::corpus2_dir();
    let exp = load_expected();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, e) in &exp {
        if name.starts_with("mcap/conformance/") {
            continue;
        }
        checked += 1;
        if let Err(msg) = check_recording(&dir, name, e) {
            failures.push(format!("{name}: {msg}"));
        }
    }
    assert!(checked >= 40, "only {checked} recordings in expected.json");
    assert!(
        failures.is_empty(),
        "{} of {checked} recordings differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn field_extraction_agrees_with_decoding_on_every_cdr_topic() {
    use bagscope_reader::encoding::{Extractor, FieldPath};
    let dir = common::corpus2_dir();
    let (mut compared, mut failures) = (0usize, Vec::new());
    for name in load_expected().keys() {
        if name.starts_with("mcap/conformance/") || name == "keelson/2024-05-15.mcap" {
            continue;
        }
        let Ok(bag) = Bag::open(dir.join(name)) else {
            continue;
        };
        let s = bag.summary();
        for (ci, c) in s.connections.iter().enumerate() {
            if c.encoding != "cdr" {
                continue;
            }
            let Ok((plan, _)) = bag.plan(ci) else {
                continue;
            };
            // Every primitive field (arrays at their last element), a few levels deep.
            let topic = format!("/{}", c.topic.trim_start_matches('/'));
            let paths =
                bagscope_reader::encoding::leaf_paths(&plan.def, &topic, -1, (5, 200), &|_| true);
            let xs: Vec<(String, Extractor)> = paths
                .into_iter()
                .filter_map(|p| {
                    let fp = FieldPath::parse(&p).ok()?;
                    Some((p, Extractor::new(&plan, &fp.segments).ok()?))
                })
                .collect();
            for n in 0..c.message_count.min(5) as usize {
                let Ok(m) = bag.nth_message(ci, n) else {
                    continue;
                };
                for (p, x) in &xs {
                    if plan.decode(&m.data).is_ok() {
                        compared += 1;
                        // Compared as printed: NaN is a value here.
                        let (a, b) = (x.extract(&m.data), x.extract_decoded(&m.data));
                        if format!("{a:?}") != format!("{b:?}") {
                            failures.push(format!("{name} {p} message {n}: {a:?} {b:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 1000, "only {compared} values compared");
    assert!(failures.is_empty(), "{failures:?}");
}

fn check_recording(dir: &std::path::Path, name: &str, e: &Value) -> Result<(), String> {
    let path = dir.join(name);
    let opened = Bag::open(&path);
    if name == "keelson/2024-05-15.mcap" {
        let err = opened.err().ok_or("the damaged file opened")?;
        let text = err.to_string();
        if !text.contains("magic") {
            return Err(format!("unclear error: {text}"));
        }
        return Ok(());
    }
    let bag = opened.map_err(|e| format!("does not open: {e}"))?;
    // What is known before the rows are read (a SQLite recording opened from its
    // metadata.yaml) is what reading them gives.
    let quick = bag.quick_summary().clone();
    let s = bag.summary();
    if quick.rows_pending {
        let counts = |s: &bagscope_reader::Summary| -> Vec<(String, u64)> {
            s.topics
                .iter()
                .map(|t| (t.name.clone(), t.message_count))
                .collect()
        };
        if (quick.message_count, quick.start_ns, quick.end_ns)
            != (s.message_count, s.start_ns, s.end_ns)
            || counts(&quick) != counts(s)
        {
            return Err("the summary before the rows are read differs from after".into());
        }
    }
    let want_n = e["message_count"].as_u64().unwrap_or(0);
    if s.message_count != want_n {
        return Err(format!("{} messages, expected {want_n}", s.message_count));
    }
    if s.start_ns != e["start_ns"].as_u64() || s.end_ns != e["end_ns"].as_u64() {
        return Err(format!(
            "time range {:?}..{:?}, expected {}..{}",
            s.start_ns, s.end_ns, e["start_ns"], e["end_ns"]
        ));
    }
    let tables = bag.tables().map_err(|e| format!("tables: {e}"))?;
    if tables.len() as u64 != want_n {
        return Err(format!("tables hold {} entries", tables.len()));
    }
    if let Some(topics) = e["topics"].as_array() {
        for t in topics {
            let tn = t["name"].as_str().unwrap_or("");
            let want = t["count"].as_u64().unwrap_or(0);
            let got = s.topic(tn).map_or(0, |t| t.message_count);
            if got != want {
                return Err(format!("topic {tn}: {got} messages, expected {want}"));
            }
        }
    }
    if let Some(samples) = e["samples"].as_object() {
        for (topic, list) in samples {
            for sm in list.as_array().into_iter().flatten() {
                let i = sm["index"].as_u64().unwrap_or(0) as usize;
                let m = common::nth_of_topic(&bag, topic, i)
                    .ok_or_else(|| format!("{topic}: no message {i}"))?;
                if Some(m.time_ns) != sm["time_ns"].as_u64() {
                    return Err(format!(
                        "{topic}[{i}]: time {}, expected {}",
                        m.time_ns, sm["time_ns"]
                    ));
                }
                if sha(&m.data) != sm["sha256"].as_str().unwrap_or("") {
                    return Err(format!(
                        "{topic}[{i}]: bytes differ ({} bytes, expected {})",
                        m.data.len(),
                        sm["bytes"]
                    ));
                }
            }
        }
    }
    // A rosbag2 storage file read without its metadata.yaml is complete (it holds every topic
    // and message): bagscope says so as a storage fact, not a warning.
    let alone = bag
        .summary()
        .storage_facts
        .iter()
        .any(|(k, v)| k == "metadata.yaml" && v.starts_with("none"));
    let anomalies = e["anomalies"].as_array().map_or(0, |a| {
        a.iter()
            .filter(|x| !(alone && x.as_str() == Some("single storage file, no metadata.yaml")))
            .count()
    });
    if anomalies > 0 && bag.warnings().is_empty() {
        return Err(format!("{anomalies} anomalies expected, no warning given"));
    }
    // Every message reads back in time order.
    let mut n = 0u64;
    let mut last = 0u64;
    for m in bag
        .messages(&bagscope_reader::Filter::default())
        .map_err(|e| e.to_string())?
    {
        let m = m.map_err(|e| format!("iteration: {e}"))?;
        if m.time_ns < last {
            return Err("iteration out of time order".into());
        }
        last = m.time_ns;
        n += 1;
    }
    if n != want_n {
        return Err(format!("iteration gave {n} messages"));
    }
    Ok(())
}

/// Compares a decoded value with the corpus's JSON (rules in bags2/README.md).
fn same(v: &V, j: &Value, plan: &Plan, path: &str) -> Result<(), String> {
    let bad = || Err(format!("{path}: {v:?} vs {j}"));
    let ok = |same: bool| if same { Ok(()) } else { bad() };
    // Floats: a float64 exactly (both readers print the shortest form that reads back);
    // a float32 within half a unit in its last place (the expected side widens it to a double).
    let float_eq = |x: f64, rel: f64| -> bool {
        match j {
            Value::String(s) if s == "NaN" => x.is_nan(),
            Value::String(s) if s == "Infinity" => x == f64::INFINITY,
            Value::String(s) if s == "-Infinity" => x == f64::NEG_INFINITY,
            Value::Number(n) => n
                .as_f64()
                .is_some_and(|y| y == x || (x - y).abs() <= rel * y.abs().max(x.abs())),
            _ => false,
        }
    };
    // Integers exactly, as integers (a bool may be given as 0/1).
    let int_eq = |x: i128| -> bool {
        match j {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or(n.as_u64().map(i128::from))
                .is_some_and(|y| y == x),
            Value::Bool(b) => i128::from(*b) == x,
            _ => false,
        }
    };
    match v {
        V::Message { ty, fields } => {
            let t = &plan.def.types[*ty];
            let Value::Object(o) = j else { return bad() };
            // Exactly the fields expected; rosbags gives an empty type rosidl's placeholder
            // member, which is no field (the byte it stands for is read, not shown).
            let placeholder = t.fields.is_empty()
                && o.len() == 1
                && o.contains_key("structure_needs_at_least_one_member");
            if o.len() != t.fields.len() && !placeholder {
                let keys: Vec<&String> = o.keys().collect();
                return Err(format!(
                    "{path}: fields {:?}, expected {keys:?}",
                    t.fields.iter().map(|f| &f.name).collect::<Vec<_>>()
                ));
            }
            for (f, n) in t.fields.iter().zip(fields) {
                let jv = o
                    .get(&f.name)
                    .ok_or_else(|| format!("{path}.{}: missing in expected", f.name))?;
                same(&n.value, jv, plan, &format!("{path}.{}", f.name))?;
            }
            Ok(())
        }
        V::String(s) => match j {
            Value::String(e) if e.as_bytes() == s.as_slice() => Ok(()),
            _ => bad(),
        },
        V::Bool(b) => match j {
            Value::Bool(e) if e == b => Ok(()),
            _ => bad(),
        },
        V::I8(x) => {
            // `byte` signedness differs between readers: compare modulo 256.
            let e = j.as_i64().ok_or(format!("{path}: {j}"))?;
            if (i64::from(*x) - e).rem_euclid(256) == 0 {
                Ok(())
            } else {
                bad()
            }
        }
        V::U8(x) => {
            let e = j.as_i64().ok_or(format!("{path}: {j}"))?;
            if (i64::from(*x) - e).rem_euclid(256) == 0 {
                Ok(())
            } else {
                bad()
            }
        }
        V::Bytes(b) => bytes_same(b, j, path),
        V::Prims(_, _) | V::Array(_) => {
            let n = v.len().unwrap_or(0);
            if let Value::Object(o) = j {
                // Long int8 arrays are given as {len, sha256}.
                if let V::Prims(_, raw) = v {
                    if o.get("len").and_then(Value::as_u64) == Some(n as u64)
                        && o.get("sha256").and_then(Value::as_str) == Some(sha(raw).as_str())
                    {
                        return Ok(());
                    }
                }
                return bad();
            }
            let Value::Array(a) = j else { return bad() };
            if a.len() != n {
                return Err(format!("{path}: {n} elements, expected {}", a.len()));
            }
            for (i, je) in a.iter().enumerate() {
                let ev = match v {
                    V::Array(items) => items[i].value.clone(),
                    _ => v.element(i).map(|x| x.0).ok_or("element")?,
                };
                same(&ev, je, plan, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        V::F64(x) => ok(float_eq(*x, 0.0)),
        V::F32(x) => ok(float_eq(f64::from(*x), f64::from(f32::EPSILON) / 2.0)),
        V::I16(x) => ok(int_eq((*x).into())),
        V::U16(x) => ok(int_eq((*x).into())),
        V::I32(x) => ok(int_eq((*x).into())),
        V::U32(x) => ok(int_eq((*x).into())),
        V::I64(x) => ok(int_eq((*x).into())),
        V::U64(x) => ok(int_eq((*x).into())),
        other => match other.as_f64() {
            Some(x) if float_eq(x, 0.0) => Ok(()),
            _ => bad(),
        },
    }
}

fn bytes_same(b: &[u8], j: &Value, path: &str) -> Result<(), String> {
    match j {
        Value::Object(o) => {
            if o.get("len").and_then(Value::as_u64) == Some(b.len() as u64)
                && o.get("sha256").and_then(Value::as_str) == Some(sha(b).as_str())
            {
                Ok(())
            } else {
                Err(format!("{path}: {} bytes differ from {j}", b.len()))
            }
        }
        Value::Array(a) if a.len() == b.len() => {
            for (i, (x, e)) in b.iter().zip(a).enumerate() {
                let e = e.as_i64().ok_or(format!("{path}[{i}]"))?;
                if (i64::from(*x) - e).rem_euclid(256) != 0 {
                    return Err(format!("{path}[{i}]: {x} vs {e}"));
                }
            }
            Ok(())
        }
        _ => Err(format!("{path}: {} bytes vs {j}", b.len())),
    }
}

#[test]
fn every_decoded_message_matches_expected_decoded_jsonl() {
    let dir = common::corpus2_dir();
    let text = std::fs::read_to_string(dir.join("expected_decoded.jsonl")).expect("read");
    let mut bags: HashMap<String, Bag> = HashMap::new();
    let mut plans: HashMap<(String, String), Plan> = HashMap::new();
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        n += 1;
        let d: Value = serde_json::from_str(line).expect("jsonl line");
        let bag_name = d["bag"].as_str().unwrap_or("").to_string();
        let topic = d["topic"].as_str().unwrap_or("").to_string();
        let index = d["index"].as_u64().unwrap_or(0) as usize;
        let bag = match bags.get(&bag_name) {
            Some(b) => b.clone(),
            None => match Bag::open(dir.join(&bag_name)) {
                Ok(b) => {
                    bags.insert(bag_name.clone(), b.clone());
                    b
                }
                Err(e) => {
                    failures.push(format!("{bag_name}: {e}"));
                    continue;
                }
            },
        };
        let Some(m) = common::nth_of_topic(&bag, &topic, index) else {
            failures.push(format!("{bag_name} {topic}[{index}]: missing"));
            continue;
        };
        if sha(&m.data) != d["sha256"].as_str().unwrap_or("") {
            failures.push(format!("{bag_name} {topic}[{index}]: bytes differ"));
            continue;
        }
        let key = (bag_name.clone(), topic.clone());
        if !plans.contains_key(&key) {
            let c = &bag.summary().connections[m.conn];
            match Plan::for_connection(c, &[]) {
                Ok(p) => {
                    plans.insert(key.clone(), p);
                }
                Err(e) => {
                    failures.push(format!("{bag_name} {topic}: {e}"));
                    continue;
                }
            }
        }
        let plan = &plans[&key];
        match plan.decode(&m.data) {
            Ok(node) => {
                if let Err(e) = same(&node.value, &d["message"], plan, "") {
                    failures.push(format!("{bag_name} {topic}[{index}] ({}): {e}", d["type"]));
                }
            }
            Err(e) => failures.push(format!("{bag_name} {topic}[{index}] ({}): {e}", d["type"])),
        }
    }
    assert!(n >= 200, "only {n} decoded messages in the corpus");
    assert!(
        failures.is_empty(),
        "{} of {n} messages differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn parse_u64(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .or(v.as_u64())
        .unwrap_or(u64::MAX)
}

#[test]
fn mcap_conformance_suite_gives_exactly_the_listed_messages() {
    let dir = common::corpus2_dir().join("mcap/conformance");
    let mut files = Vec::new();
    for d in std::fs::read_dir(&dir).expect("conformance dir") {
        let d = d.expect("entry").path();
        for f in std::fs::read_dir(&d).expect("feature dir") {
            let f = f.expect("entry").path();
            if f.extension().is_some_and(|e| e == "mcap") {
                files.push(f);
            }
        }
    }
    files.sort();
    assert_eq!(files.len(), 416, "conformance files");
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = check_conformance(f) {
            failures.push(format!(
                "{}: {e}",
                f.strip_prefix(&dir).unwrap_or(f).display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} conformance files fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

fn check_conformance(f: &std::path::Path) -> Result<(), String> {
    let j: Value = serde_json::from_str(
        &std::fs::read_to_string(f.with_extension("json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let mut want = Vec::new();
    let mut attachments = 0;
    let mut metadata = 0;
    for r in j["records"].as_array().into_iter().flatten() {
        let fields: BTreeMap<String, Value> = r["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].clone())))
            .collect();
        match r["type"].as_str() {
            Some("Message") => {
                let data: Vec<u8> = fields["data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| parse_u64(b) as u8)
                    .collect();
                want.push((
                    parse_u64(&fields["log_time"]),
                    parse_u64(&fields["channel_id"]) as u32,
                    parse_u64(&fields["sequence"]) as u32,
                    parse_u64(&fields["publish_time"]),
                    data,
                ));
            }
            Some("Attachment") => attachments += 1,
            Some("Metadata") => metadata += 1,
            _ => {}
        }
    }
    want.sort_by_key(|w| w.0);
    let bag = Bag::open(f).map_err(|e| format!("does not open: {e}"))?;
    let s = bag.summary();
    let mut got = Vec::new();
    for m in bag
        .messages(&bagscope_reader::Filter::default())
        .map_err(|e| e.to_string())?
    {
        let m = m.map_err(|e| e.to_string())?;
        got.push((
            m.time_ns,
            s.connections[m.conn].id,
            m.sequence,
            m.publish_ns,
            m.data.to_vec(),
        ));
    }
    if got != want {
        return Err(format!(
            "messages differ: got {} {:?}, want {} {:?}",
            got.len(),
            got.first(),
            want.len(),
            want.first()
        ));
    }
    if s.attachments.len() != attachments {
        return Err(format!(
            "{} attachments, expected {attachments}",
            s.attachments.len()
        ));
    }
    if s.metadata.len() != metadata {
        return Err(format!(
            "{} metadata records, expected {metadata}",
            s.metadata.len()
        ));
    }
    Ok(())
}
