//! ROS 2 without a ROS install: DDS (RTPS) through RustDDS, which interoperates with Fast DDS
//! and Cyclone DDS. ROS 2's conventions on top: topics as `rt/NAME`, types as
//! `pkg::msg::dds_::Type_`, the recorded QoS profiles ([`Qos`]), `ROS_DOMAIN_ID` and
//! `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` ([`ParticipantOptions::from_env`]).
//!
//! Messages travel as the CDR bytes a recording holds: a writer's serializer hands RustDDS the
//! bytes after the 4-byte encapsulation header (RustDDS writes the header), a reader's
//! deserializer puts the header back in front, so what is recorded is what the publisher sent.

pub mod qos;
pub mod typedesc;

pub use qos::{Qos, QosOverrides};

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Mutex;
use std::time::Duration;

use rustdds::dds::adapters::no_key::{Decode, DefaultDecoder, DeserializerAdapter};
use rustdds::dds::statusevents::{DataWriterStatus, StatusEvented};
use rustdds::no_key::SerializerAdapter;
use rustdds::{
    DomainParticipant, DomainParticipantBuilder, QosPolicies, RepresentationIdentifier, TopicKind,
};

use crate::{Error, Result};
use bagscope_reader::storage::Bytes;

/// The DDS topic of ROS 2 topic `topic` (`/chatter` → `rt/chatter`).
pub fn dds_topic(topic: &str) -> String {
    format!("rt/{}", topic.trim_start_matches('/'))
}

/// The ROS 2 topic of DDS topic `dds` (`rt/chatter` → `/chatter`); None for DDS topics that are
/// not ROS topics (services `rq/`/`rr/`, `ros_discovery_info`, other applications').
pub fn ros_topic(dds: &str) -> Option<String> {
    dds.strip_prefix("rt/").map(|t| format!("/{t}"))
}

/// The DDS type of ROS 2 type `datatype` (`std_msgs/msg/String` →
/// `std_msgs::msg::dds_::String_`; a ROS 1 style `std_msgs/String` is taken as a message).
pub fn dds_type(datatype: &str) -> String {
    let parts: Vec<&str> = datatype.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [pkg, kind, name] => format!("{pkg}::{kind}::dds_::{name}_"),
        [pkg, name] => format!("{pkg}::msg::dds_::{name}_"),
        _ => datatype.to_string(),
    }
}

/// The ROS 2 type of DDS type `dds` (`std_msgs::msg::dds_::String_` → `std_msgs/msg/String`);
/// None when it does not follow ROS 2's naming.
pub fn ros_type(dds: &str) -> Option<String> {
    let mut parts: Vec<&str> = dds.split("::").collect();
    let name = parts.pop()?.strip_suffix('_')?;
    if parts.pop()? != "dds_" || parts.len() < 2 || name.is_empty() {
        return None;
    }
    Some(format!("{}/{name}", parts.join("/")))
}

/// Which DDS domain, and whether discovery stays on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParticipantOptions {
    /// The domain (`ROS_DOMAIN_ID`, 0 by default).
    pub domain: u16,
    /// Only the loopback interface for discovery and data (ROS 2's
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`, or the older `ROS_LOCALHOST_ONLY=1`).
    pub localhost_only: bool,
}

impl ParticipantOptions {
    /// The domain `domain`, else `ROS_DOMAIN_ID`, else 0; localhost only as the environment
    /// says.
    pub fn from_env(domain: Option<u16>) -> Result<ParticipantOptions> {
        let domain = match domain {
            Some(d) => d,
            None => match std::env::var("ROS_DOMAIN_ID") {
                Ok(s) if !s.trim().is_empty() => s.trim().parse::<u16>().map_err(|_| {
                    Error::Invalid(format!("ROS_DOMAIN_ID={s:?} is not a domain number"))
                })?,
                _ => 0,
            },
        };
        // DDS maps a domain to UDP ports 7400 + 250 * domain + ...: above 232 they overflow.
        if domain > 232 {
            return Err(Error::Invalid(format!(
                "DDS domain {domain} is out of range (0 to 232)"
            )));
        }
        let range = std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").unwrap_or_default();
        let localhost_only = range.eq_ignore_ascii_case("localhost")
            || std::env::var("ROS_LOCALHOST_ONLY").is_ok_and(|v| v.trim() == "1");
        Ok(ParticipantOptions {
            domain,
            localhost_only,
        })
    }

    /// Where the participant is, for messages: `domain 0 (localhost only)`.
    pub fn describe(&self) -> String {
        format!(
            "domain {}{}",
            self.domain,
            if self.localhost_only {
                " (localhost only)"
            } else {
                ""
            }
        )
    }
}

/// A ROS 2 publisher or subscription found on the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// The ROS 2 topic (`/chatter`).
    pub topic: String,
    /// The ROS 2 type (`std_msgs/msg/String`).
    pub datatype: String,
    /// Its QoS.
    pub qos: Qos,
    /// The writer's GUID (its prefix names the participant of its node).
    pub guid: rustdds::GUID,
    /// The type hash it announces (`RIHS01_…`, ROS 2 Iron and later).
    pub type_hash: Option<String>,
}

/// One DDS participant: the node's presence on the domain.
pub struct Participant {
    dp: DomainParticipant,
    opts: ParticipantOptions,
}

fn dds_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Live {
        peer: "DDS".into(),
        reason: format!("{what}: {e}"),
    }
}

impl Participant {
    /// Joins the domain.
    pub fn new(opts: ParticipantOptions) -> Result<Participant> {
        let mut b = DomainParticipantBuilder::new(opts.domain);
        if opts.localhost_only {
            b = b.with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        }
        let dp = b
            .build()
            .map_err(|e| dds_err(&format!("joining DDS domain {}", opts.domain), e))?;
        Ok(Participant { dp, opts })
    }

    /// Its domain and discovery range.
    pub fn options(&self) -> &ParticipantOptions {
        &self.opts
    }

    fn topic(&self, topic: &str, datatype: &str, q: &QosPolicies) -> Result<rustdds::Topic> {
        self.dp
            .create_topic(dds_topic(topic), dds_type(datatype), q, TopicKind::NoKey)
            .map_err(|e| dds_err(&format!("creating topic {topic}"), e))
    }

    /// A publisher of `topic` with type `datatype` (`pkg/msg/Type`) and `qos`.
    pub fn advertise(&self, topic: &str, datatype: &str, qos: &Qos) -> Result<Publication> {
        let q = qos.policies();
        let t = self.topic(topic, datatype, &q)?;
        let p = self
            .dp
            .create_publisher(&q)
            .map_err(|e| dds_err(&format!("publishing {topic}"), e))?;
        let w = p
            .create_datawriter_no_key::<bytes::Bytes, RawOut>(&t, None)
            .map_err(|e| dds_err(&format!("publishing {topic}"), e))?;
        Ok(Publication {
            w: Mutex::new(Writer { w, matched: 0 }),
            topic: topic.to_string(),
            warned: Default::default(),
        })
    }

    /// A subscription to `topic` with type `datatype` and `qos` (ask for no more than the
    /// publishers offer: [`Qos::requested`]).
    pub fn subscribe(&self, topic: &str, datatype: &str, qos: &Qos) -> Result<Subscription> {
        let q = qos.reader_policies();
        let t = self.topic(topic, datatype, &q)?;
        let s = self
            .dp
            .create_subscriber(&q)
            .map_err(|e| dds_err(&format!("subscribing to {topic}"), e))?;
        let r = s
            .create_datareader_no_key::<Vec<u8>, RawIn>(&t, None)
            .map_err(|e| dds_err(&format!("subscribing to {topic}"), e))?;
        Ok(Subscription {
            r,
            topic: topic.to_string(),
            datatype: datatype.to_string(),
            qos: *qos,
        })
    }

    /// The ROS 2 publishers discovered so far (other participants' and this one's), one entry
    /// per publisher.
    pub fn publishers(&self) -> Vec<Endpoint> {
        self.dp
            .discovered_writers()
            .into_iter()
            .filter_map(|w| {
                let d = &w.publication_topic_data;
                Some(Endpoint {
                    topic: ros_topic(&d.topic_name)?,
                    datatype: ros_type(&d.type_name)?,
                    qos: Qos::offered_by(d),
                    guid: w.writer_proxy.remote_writer_guid,
                    type_hash: typedesc::type_hash(&w.user_data),
                })
            })
            .collect()
    }
}

/// How long one message waits for a reliable subscriber's acknowledgements before it is
/// given up.
const PUBLISH_PATIENCE: Duration = Duration::from_secs(10);

/// A topic's DDS writer.
pub struct Publication {
    w: Mutex<Writer>,
    topic: String,
    /// A failed write was reported.
    warned: std::sync::atomic::AtomicBool,
}

/// How long a player waits, once its subscribers are matched, before the first message.
const SETTLE: Duration = Duration::from_millis(500);

struct Writer {
    w: rustdds::no_key::DataWriter<bytes::Bytes, RawOut>,
    /// Subscriptions matched, as the writer's last status said.
    matched: usize,
}

impl Publication {
    /// Publishes one recorded CDR message (with its encapsulation header); a message that is
    /// not little-endian CDR, which is all ROS 2 writes, is refused.
    pub fn publish(&self, cdr: &[u8]) -> Result<()> {
        self.check(cdr)?;
        self.write(bytes::Bytes::copy_from_slice(cdr))
    }

    /// As [`Publication::publish`], without copying the message: RustDDS holds on to the
    /// buffer it is part of until every subscriber has it (a 6 MB camera frame copied on the
    /// player's thread made the messages after it late).
    pub fn publish_shared(&self, cdr: &Bytes) -> Result<()> {
        self.check(cdr)?;
        self.write(bytes::Bytes::from_owner(cdr.clone()))
    }

    /// Refuses a message that is not little-endian CDR, which is all ROS 2 writes.
    fn check(&self, cdr: &[u8]) -> Result<()> {
        if cdr.len() < 4 || cdr[..2] != RepresentationIdentifier::CDR_LE.to_bytes() {
            return Err(Error::Invalid(format!(
                "a message of {} does not start with a little-endian CDR header ({:02x?})",
                self.topic,
                &cdr[..cdr.len().min(4)]
            )));
        }
        Ok(())
    }

    fn write(&self, mut data: bytes::Bytes) -> Result<()> {
        let w = self
            .w
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A reliable writer's send window is bounded: while a subscriber has not acknowledged
        // enough, `write` waits (100 ms at a time) and hands the message back. Waiting on is
        // what keeps playback lossless (a slow subscriber holds the player up, as over ROS
        // 1); a subscriber that acknowledges nothing for PUBLISH_PATIENCE loses the message.
        let started = std::time::Instant::now();
        loop {
            match w.w.write(data, None) {
                Ok(()) => return Ok(()),
                Err(rustdds::dds::result::WriteError::WouldBlock { data: back })
                    if started.elapsed() < PUBLISH_PATIENCE =>
                {
                    data = back;
                }
                Err(e) => return Err(dds_err(&format!("publishing on {}", self.topic), e)),
            }
        }
    }

    /// Subscriptions matched now.
    pub fn subscribers(&self) -> usize {
        let mut w = self
            .w
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Some(s) = w.w.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = s {
                w.matched = usize::try_from(current.count()).unwrap_or(0);
            }
        }
        w.matched
    }

    /// Waits (at most `timeout`) until every reliable subscriber has acknowledged what was
    /// published.
    pub fn drain(&self, timeout: Duration) {
        let w = self
            .w
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = w.w.wait_for_acknowledgments(timeout);
    }

    /// The ROS 2 topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}

/// A message received: its CDR bytes as the publisher sent them (encapsulation header
/// first) and the time it arrived.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The CDR bytes.
    pub data: Vec<u8>,
    /// Receive time, ns since the Unix epoch.
    pub time_ns: u64,
}

/// A topic's DDS reader.
pub struct Subscription {
    r: rustdds::no_key::DataReader<Vec<u8>, RawIn>,
    /// The ROS 2 topic.
    pub topic: String,
    /// The ROS 2 type.
    pub datatype: String,
    /// The QoS asked for.
    pub qos: Qos,
}

impl Subscription {
    /// Up to `max` of the messages received so far, oldest first (never waits). RustDDS
    /// scans its whole cache on each take, so messages are taken in batches.
    pub fn take(&mut self, max: usize) -> Result<Vec<Sample>> {
        let now = crate::now_ns();
        let batch = self
            .r
            .take(max, rustdds::ReadCondition::any())
            .map_err(|e| dds_err(&format!("reading {}", self.topic), e))?;
        Ok(batch
            .into_iter()
            .map(|s| Sample {
                data: s.into_value(),
                time_ns: now,
            })
            .collect())
    }
}

/// Serializer of recorded messages: the bytes after the encapsulation header, which RustDDS
/// writes itself (little-endian CDR, checked by [`Publication::publish`]).
struct RawOut;

impl SerializerAdapter<bytes::Bytes> for RawOut {
    type Error = std::io::Error;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &bytes::Bytes) -> std::result::Result<bytes::Bytes, Self::Error> {
        Ok(value.slice(4.min(value.len())..))
    }
}

/// Deserializer of received messages: the encapsulation header put back in front of the
/// payload, nothing decoded.
struct RawIn;

#[derive(Clone)]
struct RawDecoder;

impl<'de> Decode<'de, Vec<u8>> for RawDecoder {
    type Error = std::io::Error;

    fn decode_bytes(
        self,
        input: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> std::result::Result<Vec<u8>, Self::Error> {
        let mut v = Vec::with_capacity(input.len() + 4);
        v.extend_from_slice(&encoding.to_bytes());
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(input);
        Ok(v)
    }
}

impl DeserializerAdapter<Vec<u8>> for RawIn {
    type Error = std::io::Error;
    type Decoded = Vec<u8>;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[
            RepresentationIdentifier::CDR_LE,
            RepresentationIdentifier::CDR_BE,
        ]
    }

    fn transform_decoded(decoded: Vec<u8>) -> Vec<u8> {
        decoded
    }
}

impl DefaultDecoder<Vec<u8>> for RawIn {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}

impl crate::play::Sink for Publication {
    fn publish(&self, data: &Bytes) {
        // Refusals are counted by the caller's conversion; a failed write is reported once
        // per topic.
        if let Err(e) = Publication::publish_shared(self, data) {
            if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("bagscope: warning: {e}");
            }
        }
    }
    fn settle(&self) -> Duration {
        // DDS discovery is two-sided: a subscriber matched here may not have matched this
        // writer yet, and a volatile reader drops what was written before it did. Half a
        // second lets the other side catch up before the first message.
        SETTLE
    }
    fn subscribers(&self) -> usize {
        Publication::subscribers(self)
    }
    fn drain(&self, timeout: Duration) {
        Publication::drain(self, timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_names_map_to_dds_names_and_back() {
        assert_eq!(dds_topic("/chatter"), "rt/chatter");
        assert_eq!(dds_topic("/a/b"), "rt/a/b");
        assert_eq!(ros_topic("rt/a/b").as_deref(), Some("/a/b"));
        assert_eq!(ros_topic("rq/srvRequest"), None);
        assert_eq!(
            dds_type("std_msgs/msg/String"),
            "std_msgs::msg::dds_::String_"
        );
        assert_eq!(
            dds_type("tf2_msgs/TFMessage"),
            "tf2_msgs::msg::dds_::TFMessage_"
        );
        assert_eq!(
            ros_type("sensor_msgs::msg::dds_::Imu_").as_deref(),
            Some("sensor_msgs/msg/Imu")
        );
        assert_eq!(ros_type("DCPSParticipant"), None);
        assert_eq!(ros_type("a::dds_::B_"), None);
    }

    #[test]
    fn the_raw_decoder_puts_the_header_back() {
        let v = RawDecoder
            .decode_bytes(&[5, 0, 0, 0], RepresentationIdentifier::CDR_LE)
            .expect("decodes");
        assert_eq!(v, [0, 1, 0, 0, 5, 0, 0, 0]);
    }
}
