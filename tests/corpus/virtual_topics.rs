//! Virtual topics (message scripts) and script series on the command line: a MarkerArray made
//! from /imu_data exported and read back by rosbags, a virtual TFMessage in `bagscope tf`,
//! tables that do not fit their type said with the field; `bagscope find` over a series
//! script's series.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

/// A message script file over `/imu_data` of tilt_laser.bag making `topic` of `ty`.
fn message_script(dir: &Path, name: &str, topic: &str, ty: &str, body: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(
        &f,
        format!("-- topic: {topic}\n-- type: {ty}\n-- input: /imu_data\n{body}"),
    )
    .unwrap();
    f
}

/// `bagscope ARGS` with its cache at `cache`: exit code, standard output and error.
fn bagscope(cache: &Path, args: &[&dyn AsRef<std::ffi::OsStr>]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .env("XDG_CACHE_HOME", cache)
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `bagscope tf REC --script SCRIPT` says of `child` in base_link, at the end of tilt_laser.bag,
/// what the script made it from /imu_data: translation x = 1 and the last /imu_data orientation
/// as `bagscope echo` decodes it.
fn tf_is_the_last_imu(cache: &Path, rec: &Path, script: &Path, child: &str) {
    let (code, out, err) = bagscope(
        cache,
        &[
            &"tf",
            &rec,
            &"--script",
            &script,
            &"--target",
            &"base_link",
            &"--source",
            &child,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let want = last_imu_as(cache, rec, child);
    assert!(out.starts_with(&want), "{want}\n{out}");
}

/// What `bagscope tf` says of `child` in base_link at the end of tilt_laser.bag: the last
/// /imu_data orientation.
fn last_imu_as(cache: &Path, rec: &Path, child: &str) -> String {
    let (_, last, _) = bagscope(cache, &[&"echo", &rec, &"-t", &"/imu_data", &"--json"]);
    let last: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    let q = &last["message"]["orientation"];
    let c = |k: &str| q[k].as_f64().unwrap();
    format!(
        "{child} in base_link at 1326899546.161840188 (2012-01-18 15:12:26.161 UTC): xyz [1.0000, 0.0000, 0.0000] q [{:.4}, {:.4}, {:.4}, {:.4}]",
        c("x"), c("y"), c("z"), c("w")
    )
}

#[test]
fn a_virtual_topic_is_exported_and_read_back_by_rosbags() {
    let rec = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let dir = common::temp_dir("scripts-virtual");
    let s = message_script(
        &dir,
        "marker.lua",
        "/imu_marker",
        "visualization_msgs/msg/MarkerArray",
        "n = 0\nfunction message(topic, msg, time)\n  n = n + 1\n  return { markers = { { header = { frame_id = msg.header.frame_id }, id = n, type = 2,\n    pose = { orientation = msg.orientation }, scale = { x = 1, y = 1, z = 1 }, color = { r = 1, a = 1 } } } }\nend\n",
    );
    let out = dir.join("out");
    let cache = dir.join("cache");
    let ran = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .env("XDG_CACHE_HOME", &cache)
        .args([
            "export".as_ref(),
            rec.as_os_str(),
            "--script".as_ref(),
            s.as_os_str(),
        ])
        .args(["-t", "/imu_marker", "--format", "rosbag2-mcap", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let py = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/virtual_topic.py"
        ))
        .arg(&rec)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}{}",
        String::from_utf8_lossy(&py.stdout),
        String::from_utf8_lossy(&py.stderr)
    );
}

/// Foxglove's schemas as output types: a `foxglove.SceneUpdate` exported to MCAP (JSON with its
/// JSON Schema) is held against Foxglove's own schema (its SDK's descriptors) and rosbags' read of
/// the input; a `foxglove.FrameTransforms` is in `bagscope tf`; a schema Foxglove lacks is said.
#[test]
fn foxglove_schemas_as_output_types_are_foxgloves_own() {
    let rec = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let dir = common::temp_dir("scripts-virtual-foxglove");
    let cache = dir.join("cache");
    let run = |args: &[&dyn AsRef<std::ffi::OsStr>]| bagscope(&cache, args);
    let scene = message_script(
        &dir,
        "scene.lua",
        "/imu_scene",
        "foxglove.SceneUpdate",
        "n = 0\nfunction message(topic, msg, time)\n  n = n + 1\n  return { entities = { { timestamp = time, frame_id = msg.header.frame_id, id = 'imu' .. n,\n    lifetime = { sec = 1 }, cubes = { { pose = { position = { x = 1 }, orientation = msg.orientation },\n    size = { x = 0.5, y = 0.5, z = 0.5 }, color = { r = 1, a = 1 } } } } } }\nend\n",
    );
    let out = dir.join("scene.mcap");
    let (code, _, err) = run(&[
        &"export",
        &rec,
        &"--script",
        &scene,
        &"-t",
        &"/imu_scene",
        &"--format",
        &"mcap",
        &"-o",
        &out,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let py = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/foxglove_json_peer.py"
        ))
        .arg(&rec)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}{}",
        String::from_utf8_lossy(&py.stdout),
        String::from_utf8_lossy(&py.stderr)
    );
    let tf = message_script(
        &dir,
        "tf.lua",
        "/tf_fox",
        "foxglove.FrameTransforms",
        "function message(topic, msg, time)\n  return { transforms = { { timestamp = time, parent_frame_id = 'base_link', child_frame_id = 'imu_fox',\n    translation = { x = 1 }, rotation = msg.orientation } } }\nend\n",
    );
    tf_is_the_last_imu(&cache, &rec, &tf, "imu_fox");
    // A field the schema lacks, named; a schema Foxglove does not have, said before work.
    let bad = message_script(
        &dir,
        "bad.lua",
        "/bad",
        "foxglove.SceneUpdate",
        "function message(topic, msg, time)\n  return { entities = { { cubes = { { colour = {} } } } } }\nend\n",
    );
    let (code, _, err) = run(&[&"echo", &rec, &"--script", &bad, &"-t", &"/bad"]);
    assert!(
        code == Some(2) && err.contains("entities[1].cubes[1].colour"),
        "{err}"
    );
    let unknown = dir.join("unknown.lua");
    std::fs::write(
        &unknown,
        "-- topic: /x\n-- type: foxglove.Nothing\n-- input: /imu_data\nfunction message() end\n",
    )
    .unwrap();
    let (code, _, err) = run(&[&"echo", &rec, &"--script", &unknown]);
    assert!(
        code == Some(2) && err.contains("not one of Foxglove's schemas"),
        "{err}"
    );
}

#[test]
fn a_virtual_transform_topic_is_in_bagscope_tf_and_bad_tables_name_the_field() {
    let rec = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let dir = common::temp_dir("scripts-virtual-tf");
    let cache = dir.join("cache");
    let run = |args: &[&dyn AsRef<std::ffi::OsStr>]| bagscope(&cache, args);
    // The IMU's orientation as the transform base_link -> imu_virtual.
    let s = message_script(
        &dir,
        "tf.lua",
        "/tf_virtual",
        "tf2_msgs/msg/TFMessage",
        "function message(topic, msg, time)\n  local sec = math.floor(time)\n  return { transforms = { { header = { stamp = { sec = sec, nanosec = math.floor((time - sec) * 1e9) }, frame_id = 'base_link' },\n    child_frame_id = 'imu_virtual', transform = { translation = { x = 1 }, rotation = msg.orientation } } } }\nend\n",
    );
    tf_is_the_last_imu(&cache, &rec, &s, "imu_virtual");
    // A table that does not fit the type: the field named, before anything is written.
    let bad = message_script(
        &dir,
        "bad.lua",
        "/bad",
        "visualization_msgs/msg/MarkerArray",
        "function message(topic, msg, time)\n  return { markers = { { scle = { x = 1 } } } }\nend\n",
    );
    let (code, _, err) = run(&[&"echo", &rec, &"--script", &bad, &"-t", &"/bad"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("markers[1].scle") && err.contains("(sample 0)"),
        "{err}"
    );
    // An output type bagscope does not know, an input the recording lacks: said before work.
    let unknown = dir.join("unknown.lua");
    std::fs::write(&unknown, "-- topic: /x\n-- type: nope_msgs/msg/Nothing\n-- input: /imu_data\nfunction message() end\n").unwrap();
    let (code, _, err) = run(&[&"echo", &rec, &"--script", &unknown]);
    assert!(
        code == Some(2) && err.contains("nope_msgs/msg/Nothing"),
        "{err}"
    );
    let missing = dir.join("missing.lua");
    std::fs::write(
        &missing,
        "-- topic: /x\n-- type: std_msgs/msg/Float64\n-- input: /nothing\nfunction message() end\n",
    )
    .unwrap();
    let (code, _, err) = run(&[&"echo", &rec, &"--script", &missing]);
    assert!(code == Some(2) && err.contains("/nothing"), "{err}");
}

#[test]
fn find_searches_a_series_script_as_its_expression() {
    let rec = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let dir = common::temp_dir("scripts-find");
    let f = dir.join("w2.lua");
    std::fs::write(
        &f,
        "-- name: w2\n-- source: /imu_data.orientation.w\nfunction calc(t, v) return v * 2 end\n",
    )
    .unwrap();
    let scripted = common::bagscope(&[&"find", &rec, &"w2 > 1.611", &"--script", &f]);
    let plain = common::bagscope(&[&"find", &rec, &"/imu_data.orientation.w > 0.8055"]);
    assert_eq!(scripted.code, Some(0), "{}", scripted.stderr);
    let times = |o: &str| -> Vec<String> {
        o.lines()
            .map(|l| l.split("  ").take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    let (a, b) = (times(&scripted.stdout), times(&plain.stdout));
    assert!(a.len() > 10 && a.len() < 356, "{} hits", a.len());
    assert_eq!(a, b);
}

/// A bagscope layout's `message_scripts` make their virtual topics for `csv --layout`, as the
/// same script given with `--script` does: the layout's plotted virtual series equals it.
#[test]
fn a_layouts_message_scripts_make_their_topics_for_csv() {
    let rec = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let dir = common::temp_dir("scripts-layout-virtual");
    let code =
        "function message(topic, msg, time)\n  return { data = 2 * msg.orientation.w }\nend\n";
    let s = message_script(&dir, "w2.lua", "/w2", "std_msgs/msg/Float64", code);
    let layout = dir.join("layout.json");
    let v = serde_json::json!({
        "bagscope_layout": 1,
        "series": ["/w2.data"],
        "message_scripts": [{"topic": "/w2", "type": "std_msgs/msg/Float64",
                             "inputs": ["/imu_data"], "code": code}],
    });
    std::fs::write(&layout, v.to_string()).unwrap();
    let by_layout = common::bagscope(&[&"csv", &rec, &"--layout", &layout]);
    assert_eq!(by_layout.code, Some(0), "{}", by_layout.stderr);
    let by_file = common::bagscope(&[&"csv", &rec, &"--script", &s, &"/w2.data"]);
    assert_eq!(by_file.code, Some(0), "{}", by_file.stderr);
    assert!(by_layout.stdout.lines().count() > 100);
    assert_eq!(by_layout.stdout, by_file.stdout);
    // A layout entry that is not a message script: said with its place.
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"bagscope_layout": 1, "message_scripts": [{"topic": "/w2"}]}"#,
    )
    .unwrap();
    let r = common::bagscope(&[&"csv", &rec, &"--layout", &bad]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("message_scripts[0]: type"),
        "{}",
        r.stderr
    );
}
