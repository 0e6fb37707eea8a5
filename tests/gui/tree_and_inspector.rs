//! The topic tree and inspector on a deferred SQLite recording, an encoding bagscope does not
//! decode, a folded namespace.

use std::time::Duration;

use bagscope_app::Cmd;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn a_sqlite_recording_shows_its_topics_before_its_rows_are_read() {
    use bagscope_app::loader::{loader, LoadEvent};
    let src = common::corpus2_dir().join("rosbag2/humble_talker");
    let quick = bagscope_reader::Bag::open(&src)
        .unwrap()
        .quick_summary()
        .clone();
    assert!(
        quick.rows_pending,
        "humble_talker opens from its metadata.yaml"
    );
    // The loader sends what it knows before reading the rows, then the opened recording.
    let mut l = loader(
        bagscope_reader::bag::merge::parts_of(std::slice::from_ref(&src)),
        false,
        bagscope_reader::OpenOptions::default(),
        Vec::new(),
        &egui::Context::default(),
    );
    let mut next = || l.wait(Duration::from_secs(60)).unwrap();
    match next() {
        LoadEvent::Preview(s) => {
            assert!(s.rows_pending);
            assert_eq!(s.topics, quick.topics);
        }
        _ => panic!("the first event is not the preview"),
    }
    match next() {
        LoadEvent::Opened { bag, .. } => {
            let s = bag.summary();
            assert!(!s.rows_pending && !s.chunks.is_empty());
            assert_eq!(s.message_count, quick.message_count);
        }
        _ => panic!("the preview is not followed by the opened recording"),
    }
    l.cancel();
    // The app draws the preview: topics, types, counts, and that the rows are being read.
    let mut h = harness(None);
    h.state_mut().preview = Some(std::sync::Arc::new(quick.clone()));
    h.run_steps(2);
    h.get_by_label_contains("Reading the rows");
    h.get_by_label_contains("as metadata.yaml counts them");
    for t in &quick.topics {
        h.get_by_label(&t.name);
        assert!(
            h.get_all_by_label(&t.message_count.to_string())
                .next()
                .is_some(),
            "{}: no count",
            t.name
        );
    }
}

#[test]
fn a_message_in_an_encoding_bagscope_does_not_decode_shows_its_text_and_bytes() {
    use common::mcap::{channel, file, message, schema};
    let dir = common::temp_dir("ui-json");
    let p = dir.join("json.mcap");
    let json = b"{\"mmsi\": 209014000, \"speed\": 8.5}";
    std::fs::write(
        &p,
        file(&[
            schema(1, "std_msgs/Float64", "ros1msg", "float64 data\n"),
            channel(1, 1, "/ros1", "ros1"),
            channel(2, 0, "/ais", "json"),
            message(1, 1, 1_000_000_000, &2.5f64.to_le_bytes()),
            message(2, 2, 1_500_000_000, json),
        ]),
    )
    .unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "/ais");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::SetPlayhead(1_500_000_000));
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    // Said plainly, not as an error; the JSON readable above the hex view.
    h.get_by_label_contains("Encoding json: not decoded");
    assert_eq!(h.query_all_by_label_contains("Cannot decode").count(), 0);
    h.get_by_label_contains("Text in it (one run)");
    h.get_by_label("{\"mmsi\": 209014000, \"speed\": 8.5}");
    h.get_by_label_contains("00000000  7b 22 6d 6d");
}

#[test]
fn a_namespace_folds_and_unfolds_in_the_tree() {
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    assert_eq!(h.get_all_by_label("pose").count(), 2);
    h.get_by_label("turtle1/").click();
    h.run_steps(2);
    assert_eq!(
        h.get_all_by_label("pose").count(),
        1,
        "turtle1/pose folded away"
    );
    h.get_by_label("turtle1/").click();
    h.run_steps(2);
    assert_eq!(h.get_all_by_label("pose").count(), 2);
    // The filter keeps the folding and shows what matches.
    h.state_mut().doc.as_mut().unwrap().tree.filter = "turtle2".into();
    h.run_steps(2);
    assert_eq!(h.get_all_by_label("pose").count(), 1);
}
