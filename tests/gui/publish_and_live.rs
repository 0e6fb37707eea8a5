//! The Publish and Live windows against real ROS 1 and ROS 2 graphs (Debian's roscore, rclpy in a
//! network namespace of its own).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bagscope_app::{App, Cmd};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

use crate::common;
use crate::*;

/// A ROS 1 bag of `/speed` (std_msgs/Float64): 0.0, 1.0, ... 19.0 every half second from t0.
fn speed_bag(dir: &Path) -> (PathBuf, u64) {
    let bag = dir.join("speed.bag");
    let mut w =
        bagscope_reader::BagWriter::create(&bag, bagscope_reader::WriteOptions::default()).unwrap();
    let c = w.add_connection(bagscope_reader::ConnectionSpec {
        topic: "/speed".into(),
        datatype: "std_msgs/Float64".into(),
        md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
        message_definition: "float64 data\n".into(),
        ..Default::default()
    });
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..20u64 {
        w.write(c, t0 + i * 500_000_000, &(i as f64).to_le_bytes())
            .unwrap();
    }
    w.finish().unwrap();
    (bag, t0)
}

/// The Publish window against a real ROS 1 graph (Debian's roscore, `rostopic echo` as the
/// subscriber): every toggle starts off; a topic turned on publishes the message at the
/// playhead when seeking while paused and the messages the playhead passes while playing;
/// the status line says where it publishes and how many subscribers the topic has.
#[test]
fn publish_toggle_sends_what_the_playhead_passes_to_a_live_ros1_subscriber() {
    let dir = common::temp_dir("ui-publish");
    let (bag, t0) = speed_bag(&dir);

    let m = common::ros1::Master::start(&dir);
    let mut echo = m.command("rostopic");
    echo.args(["echo", "/speed"]);
    let _echo = common::ros1::spawn(echo, "rostopic echo", &dir.join("echo.log"));
    let echoed = || std::fs::read_to_string(dir.join("echo.log")).unwrap_or_default();

    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "File", "Publish…");
    h.run_steps(4);
    let d = h.state().doc.as_ref().unwrap();
    assert!(d.publish.open && d.publish.on.is_empty() && !d.publish.active());
    h.get_by_label_contains("every toggle is off");
    h.state_mut().doc.as_mut().unwrap().publish.master = m.uri.clone();
    h.get_by(|n| {
        n.role() == egui::accesskit::Role::CheckBox && n.label().as_deref() == Some("/speed")
    })
    .click();
    h.run_steps(2);
    // rostopic echo finds the new publisher and subscribes.
    wait_for(&mut h, "rostopic echo to subscribe", |a| {
        let p = &a.doc.as_ref().unwrap().publish;
        p.status
            .as_ref()
            .is_some_and(|s| s.topics.get(&0).is_some_and(|(subs, _)| *subs >= 1))
    });
    h.get_by_label_contains("1 topic(s), 1 subscriber(s)");
    h.get_by_label_contains(&format!("Publishing to the ROS 1 master at {}", m.uri));
    // Seeking while paused publishes the message at the playhead: 3.0 (at 1.5 s).
    h.state_mut().apply(Cmd::SetPlayhead(t0 + 1_700_000_000));
    let t = Instant::now();
    while !echoed().contains("data: 3.0") {
        assert!(t.elapsed() < Duration::from_secs(20), "{}", echoed());
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!echoed().contains("data: 4.0"), "{}", echoed());
    // Playing publishes the messages the playhead passes, in order.
    h.state_mut().apply(Cmd::SetSpeed(4.0));
    h.state_mut().apply(Cmd::TogglePlay);
    let t = Instant::now();
    while !echoed().contains("data: 6.0") {
        assert!(t.elapsed() < Duration::from_secs(20), "{}", echoed());
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    let log = echoed();
    let (i4, i5, i6) = (
        log.find("data: 4.0").unwrap(),
        log.find("data: 5.0").unwrap(),
        log.find("data: 6.0").unwrap(),
    );
    assert!(i4 < i5 && i5 < i6, "{log}");
    // Turned off, nothing more is sent.
    h.state_mut().apply(Cmd::TogglePlay);
    h.state_mut().apply(Cmd::PublishDisconnect);
    h.run_steps(2);
    assert!(!h.state().doc.as_ref().unwrap().publish.active());
}

/// DDS discovers by multicast: a ROS 2 test runs itself again (this test binary, test `name`
/// alone) inside a network namespace of its own with only loopback, and fails if it cannot
/// make one (needs root). True in the outer run, where the test has then been run; false
/// inside, where the test goes on.
fn rerun_in_own_netns(name: &str) -> bool {
    if std::env::var_os("BAGSCOPE_TEST_IN_NETNS").is_some() {
        return false;
    }
    common::ros2::require_peers();
    let out = std::process::Command::new("unshare")
        .args([
            "--net",
            "--",
            "bash",
            "-c",
            "ip link set lo up && ip link set lo multicast on && exec \"$@\"",
            "bash",
        ])
        .arg(std::env::current_exe().unwrap())
        // This binary names its tests by module: `publish_and_live::NAME`.
        .args([
            "--exact",
            &format!(
                "{}::{name}",
                module_path!().split_once("::").map_or("", |(_, m)| m)
            ),
        ])
        .args(["--nocapture", "--test-threads", "1"])
        .env("BAGSCOPE_TEST_IN_NETNS", "1")
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .output()
        .expect("unshare runs");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && all.contains("1 passed"),
        "the test in a network namespace of its own (needs root) failed:\n{all}"
    );
    true
}

/// The Publish window onto a ROS 2 domain, with an rclpy subscriber (Fast DDS) as the peer:
/// the test runs itself again inside a network namespace of its own with only loopback (DDS
/// discovers by multicast), where a topic turned on publishes the message at the playhead
/// when seeking while paused and those the playhead passes while playing, converted from the
/// ROS 1 recording to ROS 2; the status line says the domain and the subscriber.
#[test]
fn publish_toggle_sends_to_a_live_ros2_subscriber() {
    if rerun_in_own_netns("publish_toggle_sends_to_a_live_ros2_subscriber") {
        return;
    }
    let dir = common::temp_dir("ui-publish-ros2");
    let (bag, t0) = speed_bag(&dir);
    let got_path = dir.join("got.jsonl");
    let mut sub = std::process::Command::new("python3")
        .arg(common::ros2::peer())
        .args(["sub"])
        .arg(&got_path)
        .args([
            "/speed=std_msgs/msg/Float64",
            "--count",
            "4",
            "--timeout",
            "60",
        ])
        .env("ROS_LOG_DIR", dir.join("roslog"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the rclpy subscriber starts");

    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "File", "Publish…");
    h.run_steps(4);
    h.get_by_label("ROS 2").click();
    h.run_steps(2);
    assert!(h.state().doc.as_ref().unwrap().publish.ros2);
    h.get_by(|n| {
        n.role() == egui::accesskit::Role::CheckBox && n.label().as_deref() == Some("/speed")
    })
    .click();
    h.run_steps(2);
    wait_for(&mut h, "the rclpy subscriber to match", |a| {
        let p = &a.doc.as_ref().unwrap().publish;
        p.status
            .as_ref()
            .is_some_and(|s| s.topics.get(&0).is_some_and(|(subs, _)| *subs >= 1))
    });
    h.get_by_label_contains(
        "Publishing to ROS 2 domain 0 (localhost only): 1 topic(s), 1 subscriber(s)",
    );
    // Discovery is two-sided: a moment for the subscriber to match this writer too.
    std::thread::sleep(Duration::from_secs(1));
    // Seeking while paused publishes the message at the playhead: 3.0 (at 1.5 s).
    h.state_mut().apply(Cmd::SetPlayhead(t0 + 1_700_000_000));
    h.run_steps(4);
    std::thread::sleep(Duration::from_millis(500));
    // Playing publishes the messages the playhead passes: 4.0, 5.0, 6.0, ...
    h.state_mut().apply(Cmd::SetSpeed(4.0));
    h.state_mut().apply(Cmd::TogglePlay);
    let t = Instant::now();
    while !got_path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(40),
            "the subscriber got 4 messages"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.state_mut().apply(Cmd::TogglePlay);
    let _ = sub.wait();
    let values: Vec<f64> = common::ros2::seen(&got_path)
        .iter()
        .map(|s| {
            assert_eq!(s.data.len(), 12, "a CDR std_msgs/msg/Float64");
            f64::from_le_bytes(s.data[4..12].try_into().unwrap())
        })
        .collect();
    assert_eq!(values, [3.0, 4.0, 5.0, 6.0]);
    h.state_mut().apply(Cmd::PublishDisconnect);
    h.run_steps(2);
    assert!(!h.state().doc.as_ref().unwrap().publish.active());
}

/// Opens the Live window (recordings into `dir`/cache), picks ROS 2 when `ros2`, finds the
/// topics (`topic` of type `datatype` among them), starts, and waits for the first messages
/// of `topic` on the timeline.
fn start_live(h: &mut Harness<'_, App>, dir: &Path, ros2: bool, topic: &str, datatype: &str) {
    h.state_mut().live.dir = Some(dir.join("cache"));
    menu(h, "File", "Live…");
    h.run_steps(4);
    if ros2 {
        h.get_by_label("ROS 2").click();
        h.run_steps(2);
    }
    h.get_by_label("Find topics").click();
    h.run_steps(2);
    wait_for(h, "the topics found", |a| a.live.found.is_some());
    let found = h.state().live.found.clone().unwrap().unwrap();
    assert!(
        found.contains(&(topic.to_string(), datatype.to_string())),
        "{found:?}"
    );
    h.get_by_label("Start").click();
    h.run_steps(2);
    wait_for(h, "the first messages on the timeline", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| indexed(a) && d.rec.bag.summary().topic(topic).is_some())
    });
}

/// Clicks Stop and waits until the recording is finished and shown from its final file.
fn stop_live(h: &mut Harness<'_, App>) {
    h.get_by_label("Stop").click();
    h.run_steps(2);
    wait_for(h, "the file finished and read", |a| {
        let s = a.live.session.as_ref().unwrap();
        s.end.is_some() && a.doc.as_ref().is_some_and(|d| d.rec.path == s.file) && indexed(a)
    });
    let s = h.state().live.session.as_ref().unwrap();
    assert!(matches!(s.end, Some(Ok(()))), "{:?}", s.end);
}

/// Live against a real ROS 1 graph (Debian's roscore, `rostopic pub` as the publisher): Find
/// topics lists what is published, Start records into the cache and the document fills in
/// as messages arrive (the timeline's counts, the inspector at the newest message, a plotted
/// series that keeps its points while it is read again); the view follows the newest time
/// unless scrolled back, Follow brings it back; Stop finishes the file, which holds every
/// message counted, and Save as copies it out.
#[test]
fn live_records_a_ros1_graph_and_the_view_fills_in() {
    let dir = common::temp_dir("ui-live");
    let m = common::ros1::Master::start(&dir);
    let mut publisher = m.command("rostopic");
    publisher.args(["pub", "-r", "20", "/speed", "std_msgs/Float64", "data: 2.5"]);
    let _pub = common::ros1::spawn(publisher, "rostopic pub", &dir.join("pub.log"));
    m.wait_for("/speed", true);

    let mut h = harness(None);
    h.state_mut().live.master = m.uri.clone();
    start_live(&mut h, &dir, false, "/speed", "std_msgs/Float64");
    assert!(h.state().live.picked.contains("/speed"));
    h.get_by_label_contains("Live from the ROS 1 master at");
    let count = |a: &App| {
        let d = a.doc.as_ref().unwrap();
        let ti = d
            .rec
            .bag
            .summary()
            .topics
            .iter()
            .position(|t| t.name == "/speed")
            .unwrap();
        d.rec.times(ti).map_or(0, |v| v.len())
    };
    let n1 = count(h.state());
    assert!(n1 > 0);
    // The inspector shows the newest message; a plotted field keeps filling in.
    let ti = topic_index(&h, "/speed");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::AddSeries("/speed.data".into()));
    wait_for(&mut h, "the inspector", inspected);
    // The decoded value is shown (other labels may contain "2.5" too: a time, a count).
    assert!(h.query_all_by_label("2.5").next().is_some());
    wait_for(&mut h, "the series", |a| {
        a.doc
            .as_ref()
            .unwrap()
            .plots
            .series
            .first()
            .is_some_and(|s| s.done)
    });
    let p1 = h.state().doc.as_ref().unwrap().plots.series[0].points.len();
    wait_for(&mut h, "more messages on the timeline", |a| {
        count(a) > n1 + 20
    });
    wait_for(&mut h, "more points in the plot", |a| {
        let s = &a.doc.as_ref().unwrap().plots.series[0];
        s.done && s.points.len() > p1 + 20
    });
    {
        let d = h.state().doc.as_ref().unwrap();
        let (a, b) = d.rec.range();
        assert_eq!(d.nav.playhead, b, "the playhead is at the newest message");
        assert!(d.nav.view.1 >= (b - a) as f64 - 1.0, "{:?}", d.nav.view);
        assert_eq!(d.plots.series[0].points.len(), count(h.state()));
        assert!(d.plots.series[0].points.iter().all(|p| p.y == 2.5));
    }
    // Scrolled back, the view stays where the user put it.
    let dur = {
        let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
        (b - a) as f64
    };
    h.state_mut().apply(Cmd::SetView(0.0, dur / 2.0));
    let n2 = count(h.state());
    wait_for(&mut h, "another reading", |a| count(a) > n2 + 10);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.view, (0.0, dur / 2.0));
    assert!(!h.state().live.session.as_ref().unwrap().follow);
    h.get_by_label("Follow").click();
    h.run_steps(2);
    {
        let d = h.state().doc.as_ref().unwrap();
        let (a, b) = d.rec.range();
        assert_eq!(d.nav.view.1, (b - a) as f64);
    }
    // Stop finishes the file: every message counted is in it.
    stop_live(&mut h);
    let s = h.state().live.session.as_ref().unwrap();
    assert!(s.file.is_file() && !s.file.with_extension("bag.active").exists());
    let recorded = s.stats.topics.get("/speed").copied().unwrap();
    let file = s.file.clone();
    let bag = bagscope_reader::Bag::open(&file).unwrap();
    let t = bag.summary().topic("/speed").unwrap();
    assert_eq!(t.message_count, recorded);
    assert_eq!(count(h.state()) as u64, recorded);
    h.get_by_label_contains("Recorded");
    // Save as copies it out.
    let kept = dir.join("kept.bag");
    h.state_mut().apply(Cmd::LiveSaveTo(kept.clone()));
    wait_for(&mut h, "the copy", |a| a.live.saved.is_some());
    assert_eq!(h.state().live.saved.clone().unwrap().unwrap(), kept);
    assert_eq!(std::fs::read(&kept).unwrap(), std::fs::read(&file).unwrap());
    menu(&mut h, "File", "Live…");
    h.run_steps(4);
    h.get_by_label("Save as…");
    h.get_by_label_contains("Saved as");
}

/// Live from a ROS 2 domain (in a network namespace of its own), with an rclpy talker (Fast
/// DDS) as the publisher: Find topics discovers it, Start records it into MCAP and the
/// document fills in; every message recorded is one the talker sent, in order and none
/// missing between the first and the last.
#[test]
fn live_records_a_ros2_domain() {
    if rerun_in_own_netns("live_records_a_ros2_domain") {
        return;
    }
    let dir = common::temp_dir("ui-live-ros2");
    let sent = dir.join("sent.jsonl");
    let mut talker = std::process::Command::new("python3")
        .arg(common::ros2::peer())
        .args(["pub", "/chatter", "400", "20"])
        .arg(&sent)
        .env("ROS_LOG_DIR", dir.join("roslog"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the rclpy talker starts");
    let t = Instant::now();
    while !sent.exists() {
        assert!(t.elapsed() < Duration::from_secs(30), "the talker started");
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut h = harness(None);
    start_live(&mut h, &dir, true, "/chatter", "std_msgs/msg/String");
    h.get_by_label_contains("Live from ROS 2 domain 0 (localhost only)");
    let count = |a: &App| {
        a.doc
            .as_ref()
            .and_then(|d| {
                d.rec
                    .bag
                    .summary()
                    .topic("/chatter")
                    .map(|t| t.message_count)
            })
            .unwrap_or(0)
    };
    let n1 = count(h.state());
    let ti = topic_index(&h, "/chatter");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    wait_for(&mut h, "more messages", |a| count(a) > n1 + 20);
    wait_for(&mut h, "the inspector", inspected);
    assert!(h.query_all_by_label_contains("\"hello ").count() >= 1);
    stop_live(&mut h);
    let s = h.state().live.session.as_ref().unwrap();
    assert_eq!(s.file.extension().unwrap(), "mcap");
    let bag = bagscope_reader::Bag::open(&s.file).unwrap();
    let got = common::messages(&bag);
    // std_msgs/msg/String "hello N": 4 bytes of encapsulation, a length, the text, a NUL.
    let numbers: Vec<u64> = got
        .iter()
        .map(|(topic, _, data)| {
            assert_eq!(topic, "/chatter");
            let len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
            let text = std::str::from_utf8(&data[8..8 + len - 1]).unwrap();
            text.strip_prefix("hello ").unwrap().parse().unwrap()
        })
        .collect();
    assert!(numbers.len() as u64 > n1 + 20);
    assert!(
        numbers.windows(2).all(|w| w[1] == w[0] + 1),
        "in order, none missing: {numbers:?}"
    );
    let _ = talker.kill();
    let _ = talker.wait();
}

/// The Publish window's Foxglove section serves the open recording as `bagscope serve` does:
/// Serve (port 0: any free one) shows the address, a WebSocket client of the Foxglove
/// subprotocol is answered with `serverInfo` and the `/speed` channel with its schema, and
/// "Stop serving" closes the client's connection.
#[test]
fn publish_window_serves_the_recording_to_a_foxglove_client() {
    use std::io::{Read, Write};
    let dir = common::temp_dir("ui-serve");
    let (bag, _) = speed_bag(&dir);
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "File", "Publish…");
    h.run_steps(4);
    h.state_mut().doc.as_mut().unwrap().publish.serve.port = "0".into();
    h.get_by_label("Serve").click();
    h.run_steps(2);
    wait_for(&mut h, "the server to listen", |a| {
        a.doc.as_ref().unwrap().publish.serve.address().is_some()
    });
    let addr = h
        .state()
        .doc
        .as_ref()
        .unwrap()
        .publish
        .serve
        .address()
        .unwrap()
        .to_string();
    h.run_steps(2);
    h.get_by_label_contains(&format!("Serving {addr}: 0 client(s)"));
    let mut s = std::net::TcpStream::connect(addr.trim_start_matches("ws://")).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
          Sec-WebSocket-Protocol: foxglove.sdk.v1\r\n\r\n",
    )
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let t = Instant::now();
    while !String::from_utf8_lossy(&got).contains(r#""topic":"/speed""#) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{}",
            String::from_utf8_lossy(&got)
        );
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 101"), "{text}");
    assert!(text.contains(r#""op":"serverInfo""#) && text.contains("playbackControl"));
    assert!(text.contains(r#""schemaName":"std_msgs/Float64""#) && text.contains("float64 data"));
    h.get_by_label("Stop serving").click();
    h.run_steps(2);
    assert!(!h.state().doc.as_ref().unwrap().publish.serve.running());
    // The server closes the connection: a close frame, then the end.
    let t = Instant::now();
    loop {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the connection stays open"
        );
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}
