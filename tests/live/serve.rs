//! `bagscope serve` against the Foxglove SDK's own WebSocket server (pip foxglove-sdk) serving
//! the same recordings to the same client: Foxglove's client library (npm
//! @foxglove/ws-protocol, as Lichtblick ships it), fetched at test time. Then playback control,
//! two clients at once, a client that never reads, and clients that break the protocol.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common;

/// The npm client's folder: the packages installed once, the script beside them.
fn client_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bagscope-fox-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .args(["@foxglove/ws-protocol@0.8.0", "ws@8.18.3"])
            .output()
            .expect("npm (Node.js) runs: .ci/run's machine has it");
        assert!(
            out.status.success(),
            "npm install: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/foxglove_client.js");
        std::fs::copy(script, dir.join("foxglove_client.js")).unwrap();
        dir
    })
}

/// What the client printed, one JSON object a line.
fn client(url: &str, subprotocol: &str, opts: Value) -> Vec<Value> {
    let out = Command::new("node")
        .arg(client_dir().join("foxglove_client.js"))
        .args([url, subprotocol, &opts.to_string()])
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_kind<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == kind).collect()
}

/// A server process, killed when dropped.
struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cmd` started with its output piped, and the first line it prints (once it listens).
fn start(cmd: &mut Command) -> (Child, String) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// `bagscope serve --port 0 ARGS…`, once it listens.
fn serve(args: &[&str]) -> Served {
    served(
        Command::new(env!("CARGO_BIN_EXE_bagscope"))
            .args(["serve", "--port", "0"])
            .args(args),
    )
}

/// A `bagscope serve` command started, once it prints where it listens.
fn served(cmd: &mut Command) -> Served {
    let (child, line) = start(cmd);
    let addr = line
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Served { child, url: addr }
}

/// The SDK's server on `recording` (tests/py/foxglove_serve_peer.py), once it listens.
fn sdk_server(recording: &Path) -> Served {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/foxglove_serve_peer.py");
    let (child, line) = start(
        Command::new("python3")
            .arg(script)
            .arg(recording)
            .stdin(Stdio::piped()),
    );
    let port: u16 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("foxglove-sdk server: {line:?}"));
    Served {
        child,
        url: format!("ws://127.0.0.1:{port}"),
    }
}

/// Channels by topic, and the messages: (time, topic, sha256) as received.
type Stream = (
    std::collections::BTreeMap<String, Vec<Value>>,
    Vec<(u64, String, String)>,
);

fn stream(lines: &[Value]) -> Stream {
    let mut channels = std::collections::BTreeMap::<String, Vec<Value>>::new();
    for c in of_kind(lines, "channel") {
        let v = json!([
            c["encoding"],
            c["schemaName"],
            c["schemaEncoding"],
            c["schemaSha"]
        ]);
        channels
            .entry(c["topic"].as_str().unwrap().to_string())
            .or_default()
            .push(v);
    }
    for v in channels.values_mut() {
        v.sort_by_key(|x| x.to_string());
    }
    let msgs = of_kind(lines, "msg")
        .iter()
        .map(|m| {
            (
                m["time"].as_str().unwrap().parse().unwrap(),
                m["topic"].as_str().unwrap().to_string(),
                m["sha"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (channels, msgs)
}

#[test]
fn serve_gives_what_the_foxglove_sdk_server_gives() {
    let c1 = common::corpus_dir();
    let c2 = common::corpus2_dir();
    for rec in [
        c1.join("rosbag.js/example-lz4.bag"),
        c2.join("lichtblick/example.mcap"),
        c2.join("keelson/test.mcap"),
        c2.join("rosbags-rs/test_bag_mcap/test_bag_mcap.mcap"),
    ] {
        let opts = json!({"idleMs": 1000, "maxMs": 60000});
        let peer = sdk_server(&rec);
        let want = client(&peer.url, "foxglove.sdk.v1", opts.clone());
        drop(peer);
        let ours = serve(&["--speed", "1000000", rec.to_str().unwrap()]);
        let got = client(&ours.url, "foxglove.sdk.v1", opts.clone());
        let old = client(&ours.url, "foxglove.websocket.v1", opts);
        let (want_ch, mut want_msgs) = stream(&want);
        let (got_ch, got_msgs) = stream(&got);
        let name = rec.display();
        assert!(!want_msgs.is_empty(), "{name}: the peer served nothing");
        assert_eq!(got_ch.len(), want_ch.len(), "{name}: topics");
        for (topic, want) in &want_ch {
            assert_eq!(got_ch.get(topic), Some(want), "{name}: channel of {topic}");
        }
        assert!(
            got_msgs.windows(2).all(|w| w[0].0 <= w[1].0),
            "{name}: not in time order"
        );
        let mut sorted = got_msgs.clone();
        sorted.sort();
        want_msgs.sort();
        assert_eq!(sorted.len(), want_msgs.len(), "{name}: message count");
        assert!(sorted == want_msgs, "{name}: messages differ");
        // The older subprotocol: the same stream, no playback control offered, and nothing the
        // client library does not know (no error lines).
        assert!(
            stream(&old) == (got_ch, got_msgs),
            "{name}: foxglove.websocket.v1 differs"
        );
        let info = &of_kind(&old, "serverInfo")[0]["info"];
        assert_eq!(info["capabilities"], json!(["time"]));
        for lines in [&got, &old] {
            assert!(of_kind(lines, "error").is_empty(), "{name}: {lines:?}");
            assert!(of_kind(lines, "state").is_empty(), "{name}: state unasked");
        }
        let info = &of_kind(&got, "serverInfo")[0]["info"];
        assert_eq!(info["capabilities"], json!(["time", "playbackControl"]));
        let first = want_msgs.first().unwrap().0;
        let start = info["dataStartTime"]["sec"].as_u64().unwrap() * 1_000_000_000
            + info["dataStartTime"]["nsec"].as_u64().unwrap();
        assert_eq!(start, first, "{name}: dataStartTime");
    }
}

/// A client whose subscriptions come in batches spread over 400 ms (a busy machine spreads
/// the one-message-a-channel burst of Foxglove's client library so): playback starts once
/// the burst is over, and every message of every channel arrives. Started 100 ms after the
/// first subscription, as it was, it played the 4 s recording at this speed before most
/// channels were subscribed.
#[test]
fn playback_waits_for_a_spread_out_burst_of_subscriptions() {
    let rec = common::corpus2_dir().join("keelson/test.mcap");
    let bag = bagscope_reader::Bag::open(&rec).unwrap();
    let (topics, total) = (bag.summary().topics.len(), bag.summary().message_count);
    assert!(
        topics > 300,
        "{topics} topics: the test wants many channels"
    );
    let ours = serve(&["--speed", "1000000", rec.to_str().unwrap()]);
    let lines = client(
        &ours.url,
        "foxglove.websocket.v1",
        json!({"idleMs": 1000, "maxMs": 60000, "batch": {"size": topics / 16 + 1, "gapMs": 25}}),
    );
    let subscribed = of_kind(&lines, "subscribed");
    assert_eq!(subscribed[0]["count"], json!(topics));
    assert_eq!(of_kind(&lines, "msg").len() as u64, total, "every message");
}

/// Nanoseconds of a line's "time".
fn ns(v: &Value) -> u64 {
    v["time"].as_str().unwrap().parse().unwrap()
}

#[test]
fn playback_control_pause_seek_speed() {
    let rec = common::corpus_dir().join("rosbag.js/example-lz4.bag");
    let bag = bagscope_reader::Bag::open(&rec).unwrap();
    let (start, end) = (
        bag.summary().start_ns.unwrap(),
        bag.summary().end_ns.unwrap(),
    );
    let seek = start + (end - start) * 3 / 4;
    let first_after_seek = bag
        .messages(&bagscope_reader::Filter {
            start_ns: Some(seek),
            ..Default::default()
        })
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .time_ns;
    let ours = serve(&["--paused", rec.to_str().unwrap()]);
    let lines = client(
        &ours.url,
        "foxglove.sdk.v1",
        json!({
            "idleMs": 1500,
            "maxMs": 30000,
            "actions": [
                {"after": {"ms": 400}, "request": {"command": "play", "speed": 2, "id": "a"}},
                {"after": {"messages": 300}, "request": {"command": "pause", "speed": 2, "id": "b"}},
                {"after": {"ms": 500}, "request": {"command": "play", "speed": 4, "seek": seek.to_string(), "id": "c"}},
            ],
        }),
    );
    assert!(of_kind(&lines, "status").is_empty(), "{lines:?}");
    // Nothing before the play request: the server started paused.
    let pos = |pred: &dyn Fn(&Value) -> bool| lines.iter().position(pred).unwrap();
    let req_a = pos(&|l| l["kind"] == "request" && l["id"] == "a");
    assert!(lines[..req_a].iter().all(|l| l["kind"] != "msg"));
    let states = of_kind(&lines, "state");
    let by_id = |id: &str| *states.iter().find(|s| s["id"] == id).unwrap();
    let (a, b, c) = (by_id("a"), by_id("b"), by_id("c"));
    assert_eq!(
        (a["status"].as_u64(), a["speed"].as_f64()),
        (Some(0), Some(2.0))
    );
    assert_eq!(b["status"], 1);
    assert_eq!(
        (
            c["status"].as_u64(),
            c["speed"].as_f64(),
            c["didSeek"].as_bool()
        ),
        (Some(0), Some(4.0), Some(true))
    );
    assert_eq!(ns(c), seek);
    // Paused: no message between the pause's answer and the seek's request.
    let state_b = pos(&|l| l["kind"] == "state" && l["id"] == "b");
    let req_c = pos(&|l| l["kind"] == "request" && l["id"] == "c");
    let late = lines[state_b..req_c]
        .iter()
        .filter(|l| l["kind"] == "msg")
        .count();
    assert_eq!(late, 0, "messages while paused");
    // After the seek: the first message is the first at or after the time sought.
    let state_c = pos(&|l| l["kind"] == "state" && l["id"] == "c");
    let after: Vec<&Value> = lines[state_c..]
        .iter()
        .filter(|l| l["kind"] == "msg")
        .collect();
    assert_eq!(ns(after[0]), first_after_seek);
    assert_eq!(ns(after.last().unwrap()), end);
    // Speed 4: the recording's time passes four times as fast as the client's clock.
    let data_ms = (ns(after.last().unwrap()) - ns(after[0])) as f64 / 1e6;
    let wall_ms =
        (after.last().unwrap()["wall"].as_f64().unwrap()) - after[0]["wall"].as_f64().unwrap();
    assert!(
        (wall_ms - data_ms / 4.0).abs() < 0.2 * data_ms / 4.0 + 150.0,
        "speed 4: {data_ms} ms of data in {wall_ms} ms"
    );
    // The end is said, unasked for but to a client that asked for playback control.
    let ended = states
        .iter()
        .find(|s| s["status"] == 3)
        .expect("Ended state");
    assert_eq!(ns(ended), end);
}

#[test]
fn two_clients_their_own_topics() {
    let rec = common::corpus_dir().join("rosbag.js/example-lz4.bag");
    let bag = bagscope_reader::Bag::open(&rec).unwrap();
    let count = |topic: &str| {
        bag.summary()
            .topics
            .iter()
            .find(|t| t.name == topic)
            .unwrap()
            .message_count
    };
    let ours = serve(&["--speed", "20", rec.to_str().unwrap()]);
    let url = ours.url.clone();
    let other = std::thread::spawn(move || {
        client(
            &url,
            "foxglove.websocket.v1",
            json!({"topics": ["/rosout"], "idleMs": 3000}),
        )
    });
    let one = client(
        &ours.url,
        "foxglove.sdk.v1",
        json!({"topics": ["/turtle1/pose"], "idleMs": 3000}),
    );
    let two = other.join().unwrap();
    for (lines, topic) in [(&one, "/turtle1/pose"), (&two, "/rosout")] {
        let msgs = of_kind(lines, "msg");
        assert!(msgs.iter().all(|m| m["topic"] == topic));
        assert_eq!(msgs.len() as u64, count(topic), "{topic}");
    }
}

/// The server's resident memory (kB).
fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn a_client_that_never_reads_does_not_grow_the_server() {
    let rec = common::corpus_dir().join("navigation/gps_data.bag");
    let ours = serve(&[
        "--loop",
        "--speed",
        "1000000",
        "--queue-mb",
        "4",
        rec.to_str().unwrap(),
    ]);
    let pid = ours.child.id();
    let url = ours.url.clone();
    let stalled = std::thread::spawn(move || {
        client(
            &url,
            "foxglove.sdk.v1",
            json!({"noRead": true, "maxMs": 6000, "idleMs": 60000}),
        )
    });
    std::thread::sleep(Duration::from_millis(1500));
    let before = rss_kb(pid);
    std::thread::sleep(Duration::from_millis(3500));
    let after = rss_kb(pid);
    // Looping at full speed, the recording is sent again and again: without the bound the
    // queue would grow by its 3.3 MB each pass.
    assert!(
        after < before + 32 * 1024,
        "the server grew from {before} kB to {after} kB"
    );
    stalled.join().unwrap();
    // Still serving.
    let lines = client(&ours.url, "foxglove.sdk.v1", json!({"maxMessages": 10}));
    assert_eq!(of_kind(&lines, "msg").len(), 10);
}

/// A raw connection: the handshake sent as given, the answer's head read.
fn raw(url: &str, request: &[u8]) -> (TcpStream, String) {
    let mut s = TcpStream::connect(url.trim_start_matches("ws://")).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && s.read(&mut b).unwrap_or(0) == 1 {
        head.push(b[0]);
    }
    (s, String::from_utf8_lossy(&head).into_owned())
}

fn upgrade(protocol: &str) -> Vec<u8> {
    format!(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: {protocol}\r\n\r\n"
    )
    .into_bytes()
}

/// A client frame, masked.
fn frame(op: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x80 | op];
    if payload.len() < 126 {
        f.push(0x80 | payload.len() as u8);
    } else {
        f.push(0x80 | 127);
        f.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    }
    f.extend_from_slice(&[1, 2, 3, 4]);
    f.extend(
        payload
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ [1, 2, 3, 4][i % 4]),
    );
    f
}

/// Reads server frames until a close frame; its code (None: the connection ended first).
fn close_code(s: &mut TcpStream) -> Option<u16> {
    loop {
        let mut h = [0u8; 2];
        s.read_exact(&mut h).ok()?;
        let len = match h[1] & 0x7f {
            126 => {
                let mut b = [0u8; 2];
                s.read_exact(&mut b).ok()?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                s.read_exact(&mut b).ok()?;
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        let mut p = vec![0u8; len as usize];
        s.read_exact(&mut p).ok()?;
        if h[0] & 0x0f == 0x8 {
            return Some(u16::from_be_bytes([p[0], p[1]]));
        }
    }
}

#[test]
fn bad_clients_get_an_answer_not_a_crash() {
    let rec = common::corpus_dir().join("rosbag.js/example-lz4.bag");
    let ours = serve(&[rec.to_str().unwrap()]);
    let url = ours.url.as_str();
    // Handshakes refused with an HTTP status that says why.
    let (_, head) = raw(url, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 426"), "{head}");
    let (_, head) = raw(url, &upgrade("graphql-ws"));
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let (_, head) = raw(url, b"\x16\x03\x01 not http at all\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let (_, head) = raw(url, &upgrade("foxglove.websocket.v1"));
    assert!(head.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{head}");
    // Frames that break the protocol close the connection with the code that says why.
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (vec![0x82, 0x01, 0x00], 1002),          // not masked
        (frame(0x3, b""), 1002),                 // unknown opcode
        (frame(0x1, &[0xc3, 0x28]), 1007),       // text not UTF-8
        (frame(0x2, &vec![0u8; 2 << 20]), 1009), // over the 1 MB a client may send
        (
            {
                let mut f = vec![0x82, 0xff];
                f.extend_from_slice(&(1u64 << 62).to_be_bytes());
                f
            },
            1009,
        ), // 4 EB announced
        (frame(0x8, &1000u16.to_be_bytes()), 1000), // a clean close
    ];
    for (bytes, code) in cases {
        let (mut s, head) = raw(url, &upgrade("foxglove.sdk.v1"));
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        let _ = s.write_all(&bytes);
        assert_eq!(
            close_code(&mut s),
            Some(code),
            "{:?}",
            &bytes[..bytes.len().min(12)]
        );
    }
    // Valid frames with bad contents get a status, and the connection goes on.
    let (mut s, _) = raw(url, &upgrade("foxglove.sdk.v1"));
    for bad in [
        frame(0x1, b"{not json"),
        frame(
            0x1,
            br#"{"op":"subscribe","subscriptions":[{"id":1,"channelId":999}]}"#,
        ),
        frame(0x1, br#"{"op":"advertise","channels":[]}"#),
        frame(0x2, &[0x03, 0x00]),
        frame(0x2, &[0x42]),
    ] {
        s.write_all(&bad).unwrap();
    }
    s.write_all(&frame(0x8, &1000u16.to_be_bytes())).unwrap();
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let texts = String::from_utf8_lossy(&bytes);
    for said in [
        "not JSON",
        "no channel 999",
        "advertise is not supported",
        "playback control request of 1 bytes",
        "unknown binary opcode 0x42",
    ] {
        assert!(texts.contains(said), "{said}");
    }
    // Random bytes after a handshake, many times over: the server answers a real client after.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..200 {
        let (mut s, _) = raw(url, &upgrade("foxglove.sdk.v1"));
        let n = (seed % 300) as usize;
        let junk: Vec<u8> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let _ = s.write_all(&junk);
    }
    let lines = client(url, "foxglove.sdk.v1", json!({"maxMessages": 5}));
    assert_eq!(of_kind(&lines, "msg").len(), 5);
}

/// Two recordings on one timeline, one of them read over HTTP (a server on 127.0.0.1): the
/// client gets every message of both, in time order, each recording's topics under a
/// namespace of their own (as the app and `bagscope play` merge them).
#[test]
fn serves_several_recordings_one_of_them_remote() {
    let dir = common::temp_dir("serve-remote");
    let bag = common::corpus_dir().join("rosbag.js/example-lz4.bag");
    std::fs::copy(&bag, dir.join("run.bag")).unwrap();
    let mcap = common::corpus2_dir().join("lichtblick/example.mcap");
    let srv = common::http::serve(dir.to_path_buf());
    let url = format!("{}/run.bag", srv.url);
    // The two were recorded eleven years apart: a speed that crosses the gap at once.
    let ours = serve(&["--speed", "1e12", &url, mcap.to_str().unwrap()]);
    let lines = client(&ours.url, "foxglove.sdk.v1", json!({"idleMs": 1500}));
    let count = |p: &Path| {
        bagscope_reader::Bag::open(p)
            .unwrap()
            .summary()
            .message_count
    };
    let msgs = of_kind(&lines, "msg");
    assert_eq!(msgs.len() as u64, count(&bag) + count(&mcap));
    assert!(msgs.windows(2).all(|w| ns(w[0]) <= ns(w[1])));
    let topics: std::collections::BTreeSet<&str> =
        msgs.iter().map(|m| m["topic"].as_str().unwrap()).collect();
    assert!(
        topics.iter().any(|t| t.ends_with("/turtle1/pose")),
        "{topics:?}"
    );
    assert!(topics.iter().any(|t| t.ends_with("mouse")), "{topics:?}");
}

/// `serve --ros1`: a live ROS 1 graph (Debian's roscore, `rostopic pub`) relayed to Foxglove's
/// client library: the publisher's topic advertised with its type and definition as the
/// publisher's connection header gives them, its messages byte for byte as published.
#[test]
fn serve_ros1_relays_a_live_graph() {
    use sha2::Digest;
    let dir = common::temp_dir("serve-ros1");
    let m = common::ros1::Master::start(&dir);
    let mut publ = m.command("rostopic");
    publ.args([
        "pub",
        "-r",
        "20",
        "/chatter",
        "std_msgs/String",
        "data: hello foxglove",
    ]);
    let _publ = common::ros1::spawn(publ, "rostopic pub", &dir.join("pub.log"));
    m.wait_for("/chatter", true);
    let ours = served(
        m.command(env!("CARGO_BIN_EXE_bagscope"))
            .args(["serve", "--port", "0", "--ros1"])
            .arg(&m.uri),
    );
    let lines = client(
        &ours.url,
        "foxglove.sdk.v1",
        json!({"maxMessages": 5, "maxMs": 30000, "idleMs": 30000}),
    );
    let info = &of_kind(&lines, "serverInfo")[0]["info"];
    assert_eq!(
        info["capabilities"],
        json!(["time"]),
        "no playback of a live graph"
    );
    assert!(info.get("dataStartTime").is_none());
    let ch = of_kind(&lines, "channel")
        .into_iter()
        .find(|c| c["topic"] == "/chatter")
        .unwrap_or_else(|| panic!("no /chatter channel: {lines:?}"));
    assert_eq!(
        (&ch["encoding"], &ch["schemaName"], &ch["schemaEncoding"]),
        (&json!("ros1"), &json!("std_msgs/String"), &json!("ros1msg"))
    );
    let mut want = (b"hello foxglove".len() as u32).to_le_bytes().to_vec();
    want.extend_from_slice(b"hello foxglove");
    let sha = format!("{:x}", sha2::Sha256::digest(&want));
    let msgs = of_kind(&lines, "msg");
    assert_eq!(msgs.len(), 5, "{lines:?}");
    for m in msgs {
        assert_eq!((&m["topic"], &m["sha"]), (&json!("/chatter"), &json!(sha)));
    }
}

/// `serve --ros2`: a live ROS 2 domain (an rclpy talker on Fast DDS, in a network namespace
/// of the test's own) relayed to Foxglove's client library: the topic advertised as `cdr`
/// with its type and ROS 2 definition (the talker's node describes it), the messages byte for
/// byte as an rclpy subscriber receives them, in the order sent; a topic not asked for (-t)
/// is not relayed.
#[test]
fn serve_ros2_relays_a_live_domain() {
    use common::ros2::{in_netns, padded, seen};
    use sha2::Digest;
    let dir = common::temp_dir("serve-ros2");
    let client = client_dir().join("foxglove_client.js");
    let opts = json!({"maxMessages": 20, "maxMs": 40000, "idleMs": 40000, "schemaText": true});
    let script = format!(
        "\"$BAGSCOPE\" serve --ros2 --port 8765 -t /chatter > serve.log 2> serve.err &\n\
         SRV=$!\n\
         for _ in $(seq 100); do grep -q ws:// serve.log && break; sleep 0.1; done\n\
         python3 \"$PEER\" pub /other 80 20 other.jsonl > other.log 2>&1 &\n\
         python3 \"$PEER\" pub /chatter 80 20 sent.jsonl --wait > pub.log 2>&1 &\n\
         PUB=$!\n\
         node '{}' ws://127.0.0.1:8765 foxglove.sdk.v1 '{opts}' > client.jsonl\n\
         wait $PUB\n\
         kill -INT $SRV\n\
         wait $SRV\n\
         cat serve.log serve.err pub.log >&2\n",
        client.display()
    );
    let out = in_netns(
        &dir,
        env!("CARGO_BIN_EXE_bagscope"),
        &script,
        Duration::from_secs(90),
    );
    let lines: Vec<Value> = std::fs::read_to_string(dir.join("client.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("serving the ROS 2 "), "{log}");
    let channels = of_kind(&lines, "channel");
    assert_eq!(channels.len(), 1, "only /chatter: {lines:?}");
    let ch = channels[0];
    assert_eq!(
        (
            &ch["topic"],
            &ch["encoding"],
            &ch["schemaName"],
            &ch["schemaEncoding"]
        ),
        (
            &json!("/chatter"),
            &json!("cdr"),
            &json!("std_msgs/msg/String"),
            &json!("ros2msg")
        )
    );
    assert!(
        ch["schema"].as_str().unwrap().contains("string data"),
        "{ch}"
    );
    // What the talker sent, as it goes on the wire; the client's messages are a run of them.
    let sent: Vec<String> = seen(&dir.join("sent.jsonl"))
        .iter()
        .map(|s| format!("{:x}", sha2::Sha256::digest(padded(&s.data))))
        .collect();
    let got: Vec<&str> = of_kind(&lines, "msg")
        .iter()
        .map(|m| m["sha"].as_str().unwrap())
        .collect();
    assert_eq!(got.len(), 20, "{lines:?}\n{log}");
    let first = sent
        .iter()
        .position(|s| s == got[0])
        .unwrap_or_else(|| panic!("a message the talker did not send: {lines:?}"));
    assert_eq!(got, sent[first..first + 20].to_vec(), "in the order sent");
}
