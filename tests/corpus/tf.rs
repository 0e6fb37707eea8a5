//! The transform tree over real and demo recordings: every transform read, the tree at a time,
//! lookups composed along the tree checked against the transforms as `echo` prints them, and
//! `bagscope tf`.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::AtomicBool;

use bagscope_ops::spatial::tf::TfHistory;
use bagscope_reader::Bag;

/// Every transform of `topic` as `bagscope echo --json` prints it: (time, parent, child, x, y,
/// z, yaw).
fn echoed(bag: &std::path::Path, topic: &str) -> Vec<(u64, String, String, [f64; 3], f64)> {
    let out = common::bagscope(&[&"echo", &bag, &"--json", &"-t", &topic]).ok();
    let mut v = Vec::new();
    for l in out.lines() {
        let j: serde_json::Value = serde_json::from_str(l).unwrap();
        for ts in j["message"]["transforms"].as_array().unwrap() {
            let tr = &ts["transform"]["translation"];
            let q = &ts["transform"]["rotation"];
            let f = |v: &serde_json::Value| v.as_f64().unwrap();
            let (qx, qy, qz, qw) = (f(&q["x"]), f(&q["y"]), f(&q["z"]), f(&q["w"]));
            let yaw = (2.0 * (qw * qz + qx * qy)).atan2(1.0 - 2.0 * (qy * qy + qz * qz));
            v.push((
                j["time_ns"].as_u64().unwrap(),
                ts["header"]["frame_id"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches('/')
                    .to_string(),
                ts["child_frame_id"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches('/')
                    .to_string(),
                [f(&tr["x"]), f(&tr["y"]), f(&tr["z"])],
                yaw,
            ));
        }
    }
    v
}

fn near(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-6, "{what}: {a} against {b}");
}

#[test]
fn the_turtles_tree_and_the_carrot_in_the_world() {
    let p = common::corpus_dir().join("rosbag.js/example.bag");
    let bag = Bag::open(&p).unwrap();
    let h = TfHistory::read(&bag, None, None, &AtomicBool::new(false)).unwrap();
    assert_eq!((h.bad, h.truncated), (0, false));
    let mut names = h.frames.clone();
    names.sort();
    assert_eq!(names, ["carrot", "turtle1", "turtle2", "world"]);
    let tf = echoed(&p, "/tf");
    let st = echoed(&p, "/tf_static");
    let total: usize = h.samples.iter().map(Vec::len).sum();
    assert_eq!(total, tf.len() + st.len(), "every transform kept");
    assert!(h.is_static[h.frame("carrot").unwrap()]);
    // At a few times: the tree, and the carrot (1 m ahead of turtle1) in the world.
    let (a, z) = (tf[0].0, tf[tf.len() - 1].0);
    for k in 1..=4u64 {
        let t = a + (z - a) / 4 * k;
        let tree: Vec<(String, usize)> = h
            .tree_at(t)
            .iter()
            .map(|f| (h.frames[f.frame].clone(), f.depth))
            .collect();
        let t1 = tf.iter().rfind(|x| x.0 <= t && x.2 == "turtle1").unwrap();
        assert_eq!(t1.1, "world");
        assert!(tree.contains(&("world".into(), 0)), "{tree:?}");
        assert!(tree.contains(&("turtle1".into(), 1)), "{tree:?}");
        assert!(tree.contains(&("carrot".into(), 2)), "{tree:?}");
        let c = h.lookup("world", "carrot", t).unwrap();
        near(c.t[0], t1.3[0] + t1.4.cos(), "carrot x");
        near(c.t[1], t1.3[1] + t1.4.sin(), "carrot y");
        near(c.rpy()[2], t1.4, "carrot yaw");
        // And the other way round.
        let w = h.lookup("carrot", "world", t).unwrap();
        let back = c.then(&w);
        near(back.t[0], 0.0, "round trip x");
        near(back.t[1], 0.0, "round trip y");
    }
}

#[test]
fn bagscope_tf_prints_the_tree_and_a_lookup() {
    let dir = common::temp_dir("tf-demo");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let out = common::bagscope(&[&"tf", &p, &"--at", &"+10"]).ok();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("transform tree at "), "{out}");
    // The map's static transform to odom, then the robot's chain.
    assert_eq!(lines[1], "map");
    assert!(
        lines[2].starts_with("  odom  xyz [0.5000, 0.2500, 0.0000]")
            && lines[2].ends_with("(static)"),
        "{out}"
    );
    assert!(lines[3].starts_with("    base_link  xyz ["), "{out}");
    // Under it the robot's caster (a fixed joint of its URDF), then the laser from /tf.
    assert!(
        lines[4].starts_with("      caster  xyz [-0.1500, 0.0000, 0.0400]")
            && lines[4].ends_with("(static)"),
        "{out}"
    );
    assert!(
        lines[5].starts_with("      laser  xyz [0.1200, 0.0000, 0.2500]"),
        "{out}"
    );
    // The laser in odom: base_link's pose at that time, the laser 12 cm ahead, 25 cm up.
    let tf = echoed(&p, "/tf");
    let bag = Bag::open(&p).unwrap();
    let t = bag.summary().start_ns.unwrap() + 10_000_000_000;
    let b = tf.iter().rfind(|x| x.0 <= t && x.2 == "base_link").unwrap();
    let out = common::bagscope(&[
        &"tf",
        &p,
        &"--at",
        &"+10",
        &"--target",
        &"odom",
        &"--source",
        &"laser",
    ])
    .ok();
    let want = format!(
        "xyz [{:.4}, {:.4}, 0.2500]",
        b.3[0] + 0.12 * b.4.cos(),
        b.3[1] + 0.12 * b.4.sin()
    );
    assert!(out.starts_with("laser in odom at "), "{out}");
    assert!(out.contains(&want), "{out} lacks {want}");
    // The track as CSV: one row a transform of base_link, each the laser in odom then.
    let csv = common::bagscope(&[
        &"tf",
        &p,
        &"--target",
        &"odom",
        &"--source",
        &"laser",
        &"--track",
    ])
    .ok();
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(csv.starts_with("time_ns,x,y,z,qx,qy,qz,qw,roll,pitch,yaw\n"));
    let bases: Vec<_> = tf.iter().filter(|x| x.2 == "base_link").collect();
    assert_eq!(rows.len(), bases.len());
    for (r, b) in rows.iter().zip(&bases).step_by(97) {
        // Times as f64 carry ~256 ns of rounding at this epoch.
        assert!((r[0] - b.0 as f64).abs() < 1e3, "{} {}", r[0], b.0);
        near(r[1], b.3[0] + 0.12 * b.4.cos(), "x");
        near(r[2], b.3[1] + 0.12 * b.4.sin(), "y");
        near(r[3], 0.25, "z");
        near(r[10], b.4, "yaw");
    }
    // A frame that is not there, and a recording without transforms.
    let r = common::bagscope(&[&"tf", &p, &"--target", &"odom", &"--source", &"camera"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("no frame \"camera\""), "{}", r.stderr);
    let r = common::bagscope(&[&"tf", &common::corpus_dir().join("ros_numpy/test.bag")]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("has no transform topic"), "{}", r.stderr);
}
