//! The export window: ROS 2 to a ROS 1 bag, a rosbag2 output split by time.

use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

/// A ROS 2 recording exported through the export window into a ROS 1 bag with "ROS 2 messages
/// to ROS 1" ticked: the bag holds the talker's strings with their ROS 1 type; /rosout, which
/// has no ROS 1 type, is left out and said so.
#[test]
fn export_window_converts_ros2_to_a_ros1_bag() {
    let dir = common::temp_dir("ui-to-ros1");
    let mut h = harness(Some(common::corpus2_dir().join("rosbag2/humble_talker")));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "File", "Export…");
    h.run_steps(3);
    h.get_by_label("ROS 1 bag").click();
    h.run_steps(2);
    h.get_by_label_contains("ROS 2 messages to ROS 1").click();
    h.run_steps(2);
    let out = dir.join("talker.bag");
    h.state_mut().doc.as_mut().unwrap().export.bag_out = out.display().to_string();
    h.get_by_label("Export recording").click();
    let res = export_result(&mut h);
    assert!(
        matches!(&res, Some(Ok(m)) if m.contains("/rosout")),
        "the result names what was left out: {res:?}"
    );
    let b = bagscope_reader::Bag::open(&out).unwrap();
    let s = b.summary();
    let t = s.topic("/topic").expect("the talker's topic");
    assert_eq!(t.message_count, 10);
    assert_eq!(t.datatype, "std_msgs/String");
    assert!(s.topic("/rosout").is_none());
    assert!(s.connections.iter().all(|c| c.encoding == "ros1"));
}

/// The export window's rosbag2 output split by time: the split fields show for rosbag2 formats,
/// and a recording exported with a third of its span per file comes out in three or more
/// storage files holding every message.
#[test]
fn export_window_splits_a_rosbag2_output_by_time() {
    let dir = common::temp_dir("ui-split");
    let src = common::corpus2_dir().join("rosbag2/humble_talker");
    let mut h = harness(Some(src.clone()));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "File", "Export…");
    h.run_steps(3);
    assert!(
        h.query_by_label("split every").is_none(),
        "split shown for a bag"
    );
    h.get_by_label("rosbag2 (SQLite)").click();
    h.run_steps(2);
    h.get_by_label("split every");
    let (a, z, n) = {
        let s = h.state().doc.as_ref().unwrap().rec.bag.summary();
        (s.start_ns.unwrap(), s.end_ns.unwrap(), s.message_count)
    };
    let out = dir.join("talker_split");
    {
        let e = &mut h.state_mut().doc.as_mut().unwrap().export;
        e.bag_out = out.display().to_string();
        e.split_s = ((z - a) / 3 + 1) as f64 / 1e9;
    }
    h.get_by_label("Export recording").click();
    let res = export_result(&mut h);
    assert!(matches!(res, Some(Ok(_))), "{res:?}");
    let b = bagscope_reader::Bag::open(&out).unwrap();
    assert!(
        b.summary().files.len() >= 3,
        "{} files",
        b.summary().files.len()
    );
    assert_eq!(b.summary().message_count, n);
}
