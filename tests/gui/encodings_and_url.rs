//! Protobuf and JSON messages in the inspector and plots; a recording opened over HTTP.

use std::path::PathBuf;

use bagscope_app::Cmd;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn a_protobuf_message_decodes_in_the_inspector() {
    let mut h = harness(Some(common::corpus2_dir().join("keelson/test.mcap")));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "rise/v0/sjofartsverket/pubsub/raw/ais/json/209014000/3");
    let end = h.state().doc.as_ref().unwrap().rec.range().1;
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::SetPlayhead(end));
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    // Field by field from the FileDescriptorSet; the bytes field's JSON shown as text.
    h.get_by_label("timestamp");
    h.get_by_label("google.protobuf.Timestamp");
    h.get_by_label("seconds");
    // The Timestamp's date beside it, read here from the message's own fields.
    let stamp_ns = {
        let d = h.state().doc.as_ref().unwrap();
        let got = d.insp.shown.as_ref().unwrap();
        let (plan, node) = got.decoded.as_ref().unwrap();
        let ts = node.field(&plan.def, "timestamp").unwrap();
        let secs = ts
            .field(&plan.def, "seconds")
            .unwrap()
            .value
            .as_f64()
            .unwrap();
        let nanos = ts
            .field(&plan.def, "nanos")
            .unwrap()
            .value
            .as_f64()
            .unwrap();
        secs as u64 * 1_000_000_000 + nanos as u64
    };
    h.get_by_label(&format!("{} UTC", bagscope_ops::timefmt::date(stamp_ns)));
    assert!(
        h.query_all_by_label_contains("\\\"mmsi\\\":209014000")
            .count()
            >= 1
    );
    assert_eq!(h.query_all_by_label_contains("not decoded").count(), 0);
}

#[test]
fn a_json_field_of_a_topic_without_a_slash_plots_from_the_inspector() {
    let mut h = harness(Some(common::corpus2_dir().join("lichtblick/example.mcap")));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "mouse");
    let a = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::SetPlayhead(a));
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    // The first event's x, decoded from the JSON Schema's `number`.
    h.get_by_label("1511.0").click();
    h.run_steps(2);
    wait_for(&mut h, "the series", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.first().is_some_and(|s| s.done))
    });
    let d = h.state().doc.as_ref().unwrap();
    let s = &d.plots.series[0];
    assert_eq!(s.path, "/mouse.clientX");
    assert_eq!(s.points.len(), 111, "{:?}", s.note);
}

/// "Open URL…": a location typed in the bar's menu opens a recording served over HTTP (from a
/// server on 127.0.0.1), shown by its URL.
#[cfg(feature = "remote")]
#[test]
fn open_url_opens_a_recording_over_http() {
    let dir = common::temp_dir("ui-url");
    common::write_fixture(
        &dir.join("run.bag"),
        bagscope_reader::Compression::Lz4,
        2000,
        600,
    );
    let srv = common::http::serve(dir.to_path_buf());
    let url = format!("{}/run.bag", srv.url);
    let mut h = harness(None);
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open URL…").click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::TextInput).focus();
    h.run_steps(1);
    h.get_by_role(egui::accesskit::Role::TextInput)
        .type_text(&url);
    h.run_steps(1);
    assert_eq!(h.state().url_input, url);
    h.get_by_label("Open").click();
    h.step();
    wait_for(&mut h, "the recording over HTTP", |a| {
        assert_eq!(a.error, None);
        indexed(a)
    });
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.rec.path, PathBuf::from(&url));
    assert!(
        h.query_all_by_label_contains("Float64 · 400").count() >= 1,
        "/b has 400 messages"
    );
    assert!(srv.state.requests.load(std::sync::atomic::Ordering::SeqCst) > 0);
}
