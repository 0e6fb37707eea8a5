//! The Foxglove WebSocket protocol's messages (`foxglove.websocket.v1`, and `foxglove.sdk.v1`,
//! the Foxglove SDK's, which adds playback control): the server's JSON and binary messages
//! encoded, a client's decoded. The layouts are those of Foxglove's specification
//! (`ws-protocol/docs/spec.md`) and of the SDK's `PlaybackControlRequest`/`PlaybackState`.

use serde_json::{json, Value};

/// The subprotocols served, in the order preferred when a client offers both.
pub const SUBPROTOCOLS: [&str; 2] = ["foxglove.sdk.v1", "foxglove.websocket.v1"];

/// Binary opcodes the server sends.
pub mod server_op {
    /// A subscribed message: subscription id, log time, the bytes.
    pub const MESSAGE_DATA: u8 = 0x01;
    /// The server's clock.
    pub const TIME: u8 = 0x02;
    /// Playback's state, answering a playback control request.
    pub const PLAYBACK_STATE: u8 = 0x05;
}

/// Binary opcodes a client sends.
pub mod client_op {
    /// A message on a channel the client advertised (not served here).
    pub const MESSAGE_DATA: u8 = 0x01;
    /// Play, pause, speed and seek.
    pub const PLAYBACK_CONTROL: u8 = 0x03;
}

/// A channel as advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Its id.
    pub id: u64,
    /// Topic.
    pub topic: String,
    /// Message encoding as stored: `ros1`, `cdr`, `protobuf`, `json`, ...
    pub encoding: String,
    /// Schema name (the message type).
    pub schema_name: String,
    /// Schema language: `ros1msg`, `ros2msg`, `ros2idl`, `protobuf`, `jsonschema`, or empty.
    pub schema_encoding: String,
    /// The schema's bytes.
    pub schema: Vec<u8>,
}

impl Channel {
    fn to_json(&self) -> Value {
        // Binary schema languages travel in base64, text ones as they are (the spec).
        let schema = if matches!(self.schema_encoding.as_str(), "protobuf" | "flatbuffer") {
            bagscope_reader::encoding::base64::encode(&self.schema)
        } else {
            String::from_utf8_lossy(&self.schema).into_owned()
        };
        let mut c = json!({
            "id": self.id,
            "topic": self.topic,
            "encoding": self.encoding,
            "schemaName": self.schema_name,
            "schema": schema,
        });
        if !self.schema_encoding.is_empty() {
            c["schemaEncoding"] = json!(self.schema_encoding);
        }
        c
    }
}

/// `serverInfo`: the name, capabilities and the data's time range (for playback control).
pub fn server_info(name: &str, capabilities: &[&str], range: Option<(u64, u64)>) -> String {
    let mut v = json!({
        "op": "serverInfo",
        "name": name,
        "capabilities": capabilities,
        "metadata": {"fg-library": concat!("bagscope/", env!("CARGO_PKG_VERSION"))},
    });
    if let Some((start, end)) = range {
        v["dataStartTime"] = timestamp(start);
        v["dataEndTime"] = timestamp(end);
    }
    v.to_string()
}

fn timestamp(ns: u64) -> Value {
    json!({"sec": (ns / 1_000_000_000).min(u64::from(u32::MAX)), "nsec": ns % 1_000_000_000})
}

/// `advertise` of `channels`.
pub fn advertise(channels: &[Channel]) -> String {
    let list: Vec<Value> = channels.iter().map(Channel::to_json).collect();
    json!({"op": "advertise", "channels": list}).to_string()
}

/// Status levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Information.
    Info = 0,
    /// A warning.
    Warning = 1,
    /// An error.
    Error = 2,
}

/// `status`: a line the client shows.
pub fn status(level: Level, message: &str) -> String {
    json!({"op": "status", "level": level as u8, "message": message}).to_string()
}

/// The header of a `messageData` frame (its payload follows).
pub fn message_data_header(subscription: u32, log_time: u64) -> [u8; 13] {
    let mut h = [0u8; 13];
    h[0] = server_op::MESSAGE_DATA;
    h[1..5].copy_from_slice(&subscription.to_le_bytes());
    h[5..13].copy_from_slice(&log_time.to_le_bytes());
    h
}

/// A `time` frame.
pub fn time(ns: u64) -> [u8; 9] {
    let mut t = [0u8; 9];
    t[0] = server_op::TIME;
    t[1..].copy_from_slice(&ns.to_le_bytes());
    t
}

/// Playback's status as the SDK names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Playing at the requested speed.
    Playing = 0,
    /// Paused.
    Paused = 1,
    /// Not playing yet.
    Buffering = 2,
    /// The end of the data was reached.
    Ended = 3,
}

/// A `playbackState` frame.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaybackState {
    /// Status.
    pub status: Status,
    /// The playhead (ns).
    pub current_time: u64,
    /// Speed, a factor of real time.
    pub speed: f32,
    /// Whether this answers a seek.
    pub did_seek: bool,
    /// The request answered, if any.
    pub request_id: Option<String>,
}

impl PlaybackState {
    /// The frame's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let id = self.request_id.as_deref().unwrap_or_default();
        let mut b = Vec::with_capacity(19 + id.len());
        b.push(server_op::PLAYBACK_STATE);
        b.push(self.status as u8);
        b.extend_from_slice(&self.current_time.to_le_bytes());
        b.extend_from_slice(&self.speed.to_le_bytes());
        b.push(u8::from(self.did_seek));
        b.extend_from_slice(&(id.len() as u32).to_le_bytes());
        b.extend_from_slice(id.as_bytes());
        b
    }
}

/// What a client asks of playback.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaybackRequest {
    /// Play (true) or pause.
    pub play: bool,
    /// Speed.
    pub speed: f32,
    /// Where to seek first (ns), if anywhere.
    pub seek: Option<u64>,
    /// The request's id, echoed in the answer.
    pub request_id: String,
}

/// What a client sent, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// Subscriptions: (subscription id, channel id).
    Subscribe(Vec<(u32, u64)>),
    /// Subscription ids ended.
    Unsubscribe(Vec<u32>),
    /// A playback control request.
    Playback(PlaybackRequest),
    /// A valid message of an operation not served here (its name).
    Unsupported(String),
}

/// A text message decoded; Err says what is wrong with it.
pub fn parse_text(text: &str) -> Result<ClientMessage, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let op = v
        .get("op")
        .and_then(Value::as_str)
        .ok_or("a JSON message without an \"op\"")?;
    let ids = |field: &str| -> Result<&Vec<Value>, String> {
        v.get(field)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{op} without a \"{field}\" list"))
    };
    let u32_of = |x: &Value, what: &str| -> Result<u32, String> {
        x.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{op}: {what} is not an integer of 32 bits: {x}"))
    };
    match op {
        "subscribe" => {
            let mut subs = Vec::new();
            for s in ids("subscriptions")? {
                let id = u32_of(s.get("id").unwrap_or(&Value::Null), "a subscription id")?;
                let channel = s
                    .get("channelId")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| format!("subscribe: a channelId that is not an integer: {s}"))?;
                subs.push((id, channel));
            }
            Ok(ClientMessage::Subscribe(subs))
        }
        "unsubscribe" => ids("subscriptionIds")?
            .iter()
            .map(|x| u32_of(x, "a subscription id"))
            .collect::<Result<_, _>>()
            .map(ClientMessage::Unsubscribe),
        other => Ok(ClientMessage::Unsupported(other.to_string())),
    }
}

/// A binary message decoded; Err says what is wrong with it.
pub fn parse_binary(b: &[u8]) -> Result<ClientMessage, String> {
    let Some((&op, rest)) = b.split_first() else {
        return Err("an empty binary message".into());
    };
    match op {
        client_op::PLAYBACK_CONTROL => {
            const FIXED: usize = 1 + 4 + 1 + 8 + 4;
            if rest.len() < FIXED {
                return Err(format!(
                    "a playback control request of {} bytes (at least {FIXED})",
                    rest.len()
                ));
            }
            let play = match rest[0] {
                0 => true,
                1 => false,
                c => return Err(format!("playback command {c} (0 play, 1 pause)")),
            };
            let speed = f32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]);
            let mut t = [0u8; 8];
            t.copy_from_slice(&rest[6..14]);
            let seek = (rest[5] != 0).then(|| u64::from_le_bytes(t));
            let n = u32::from_le_bytes([rest[14], rest[15], rest[16], rest[17]]) as usize;
            let id = rest[FIXED..]
                .get(..n)
                .ok_or_else(|| format!("a request id of {n} bytes past the message's end"))?;
            let request_id = std::str::from_utf8(id)
                .map_err(|_| "a request id that is not UTF-8".to_string())?
                .to_string();
            Ok(ClientMessage::Playback(PlaybackRequest {
                play,
                speed,
                seek,
                request_id,
            }))
        }
        client_op::MESSAGE_DATA => Ok(ClientMessage::Unsupported("client message data".into())),
        op => Err(format!("unknown binary opcode {op:#04x}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A request laid out as the SDK's `PlaybackControlRequest::write_payload` does.
    fn request(cmd: u8, speed: f32, seek: Option<u64>, id: &str) -> Vec<u8> {
        let mut b = vec![client_op::PLAYBACK_CONTROL, cmd];
        b.extend_from_slice(&speed.to_le_bytes());
        b.push(u8::from(seek.is_some()));
        b.extend_from_slice(&seek.unwrap_or(0).to_le_bytes());
        b.extend_from_slice(&(id.len() as u32).to_le_bytes());
        b.extend_from_slice(id.as_bytes());
        b
    }

    #[test]
    fn playback_requests() {
        let r = parse_binary(&request(0, 2.0, Some(100_500_000_000), "some-id")).unwrap();
        assert_eq!(
            r,
            ClientMessage::Playback(PlaybackRequest {
                play: true,
                speed: 2.0,
                seek: Some(100_500_000_000),
                request_id: "some-id".into()
            })
        );
        let r = parse_binary(&request(1, 1.0, None, "")).unwrap();
        assert!(matches!(r, ClientMessage::Playback(p) if !p.play && p.seek.is_none()));
        assert!(parse_binary(&request(2, 1.0, None, "")).is_err());
        let mut short = request(0, 1.0, None, "abc");
        short.pop();
        assert!(parse_binary(&short)
            .unwrap_err()
            .contains("past the message's end"));
        assert!(parse_binary(&[0x03, 0]).is_err());
        assert!(parse_binary(&[]).is_err());
        assert!(parse_binary(&[0x7f])
            .unwrap_err()
            .contains("unknown binary opcode"));
    }

    /// Random bytes, and random mutations of valid messages: an answer or an error, never a
    /// panic.
    #[test]
    fn random_messages() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let valid = [
            request(0, 2.0, Some(5), "abc"),
            br#"{"op":"subscribe","subscriptions":[{"id":1,"channelId":4}]}"#.to_vec(),
            br#"{"op":"unsubscribe","subscriptionIds":[1,2]}"#.to_vec(),
        ];
        for i in 0..20_000 {
            let mut b: Vec<u8> = if i % 2 == 0 {
                (0..next() % 80).map(|_| next() as u8).collect()
            } else {
                valid[i % 3].clone()
            };
            for _ in 0..(next() % 4) {
                if !b.is_empty() {
                    let k = (next() as usize) % b.len();
                    b[k] = next() as u8;
                }
            }
            let _ = parse_binary(&b);
            let _ = parse_text(&String::from_utf8_lossy(&b));
        }
    }

    #[test]
    fn playback_state_layout() {
        let s = PlaybackState {
            status: Status::Paused,
            current_time: 7,
            speed: 0.5,
            did_seek: true,
            request_id: Some("r".into()),
        };
        let b = s.encode();
        assert_eq!(b[0], 5);
        assert_eq!(b[1], 1);
        assert_eq!(&b[2..10], &7u64.to_le_bytes());
        assert_eq!(&b[10..14], &0.5f32.to_le_bytes());
        assert_eq!(b[14], 1);
        assert_eq!(&b[15..19], &1u32.to_le_bytes());
        assert_eq!(&b[19..], b"r");
    }

    #[test]
    fn json_messages() {
        assert_eq!(
            parse_text(r#"{"op":"subscribe","subscriptions":[{"id":1,"channelId":4}]}"#).unwrap(),
            ClientMessage::Subscribe(vec![(1, 4)])
        );
        assert_eq!(
            parse_text(r#"{"op":"unsubscribe","subscriptionIds":[1,2]}"#).unwrap(),
            ClientMessage::Unsubscribe(vec![1, 2])
        );
        assert_eq!(
            parse_text(r#"{"op":"getParameters","parameterNames":[]}"#).unwrap(),
            ClientMessage::Unsupported("getParameters".into())
        );
        for bad in [
            "{",
            "[]",
            r#"{"op":"subscribe"}"#,
            r#"{"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]}"#,
            r#"{"op":"subscribe","subscriptions":[{"id":1}]}"#,
            r#"{"op":"unsubscribe","subscriptionIds":[4294967296]}"#,
        ] {
            assert!(parse_text(bad).is_err(), "{bad}");
        }
        let c = Channel {
            id: 3,
            topic: "/a".into(),
            encoding: "protobuf".into(),
            schema_name: "p.M".into(),
            schema_encoding: "protobuf".into(),
            schema: vec![0, 1, 2],
        };
        let v: Value = serde_json::from_str(&advertise(&[c])).unwrap();
        assert_eq!(v["channels"][0]["schema"], "AAEC");
        let info: Value =
            serde_json::from_str(&server_info("n", &["time"], Some((1_500_000_000, 2)))).unwrap();
        assert_eq!(
            info["dataStartTime"],
            json!({"sec": 1, "nsec": 500_000_000})
        );
    }
}
