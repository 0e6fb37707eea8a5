//! A ROS 2 publisher's message definition, asked of its node: nodes of ROS 2 Iron and later
//! (rclcpp, rclpy) offer the service `~/get_type_description`
//! (`type_description_interfaces/srv/GetTypeDescription`, REP 2011), and each publisher
//! announces its type's hash in its USER_DATA (`typehash=RIHS01_…;`).
//!
//! The [`Describer`] finds the nodes of a publisher's participant by their service readers
//! (`rq/NODE/get_type_descriptionRequest` with the publisher's GUID prefix), asks each with
//! the type's name and hash, and turns the answer (the type's fields and every type it
//! uses, by type id) back into `.msg` text that bagscope's parser and every MCAP reader
//! understand. Requests are sent the way Fast DDS's clients send them (RPC over DDS's
//! "enhanced" mapping: the request's related sample identity names the client's reply
//! reader, the reply's names the request). It never blocks: [`Describer::poll`] is called
//! from the recorder's loop, and an answer that does not come within [`PATIENCE`] leaves the
//! definition to the search path and the shipped interfaces.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rustdds::dds::statusevents::{DataWriterStatus, StatusEvented};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{QosPolicyBuilder, SampleIdentity, SequenceNumber, TopicKind, GUID};

use super::{dds_err, Participant, RawIn, RawOut};
use crate::Result;

/// The DDS type of the service's requests.
const REQUEST_TYPE: &str = "type_description_interfaces::srv::dds_::GetTypeDescription_Request_";
/// The DDS type of its replies.
const REPLY_TYPE: &str = "type_description_interfaces::srv::dds_::GetTypeDescription_Response_";
/// The service's name under a node.
const SERVICE: &str = "get_type_description";

/// How long a type's description is waited for (discovery of the client's endpoints by the
/// node included).
pub const PATIENCE: Duration = Duration::from_secs(3);

/// The type hash in a publisher's USER_DATA (`typehash=RIHS01_…;`), if it announces one.
/// RustDDS hands the policy over as serialized (a length, the octets, padding): the
/// `key=value;` pairs are looked for in it.
pub fn type_hash(user_data: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"typehash=";
    let at = user_data.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let value: Vec<u8> = user_data[at..]
        .iter()
        .copied()
        .take_while(|&b| b != b';' && b != 0)
        .collect();
    let value = String::from_utf8(value).ok()?;
    (!value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(value)
}

/// The node behind a service reader's DDS topic (`rq/ns/talker/get_type_descriptionRequest`
/// → `/ns/talker`).
fn node_of_request_topic(topic: &str) -> Option<String> {
    let node = topic
        .strip_prefix("rq/")?
        .strip_suffix(&format!("/{SERVICE}Request"))?;
    (!node.is_empty()).then(|| format!("/{node}"))
}

/// A type's definition as its publisher's node described it.
#[derive(Debug, Clone, PartialEq)]
pub struct Described {
    /// `.msg` text: the type's fields, then each type it uses after a `MSG:` line.
    pub text: String,
    /// The node that answered (`/talker`).
    pub node: String,
}

/// What became of a request: the definition, or why there is none.
pub type Outcome = std::result::Result<Described, String>;

/// One client of one node's service.
struct Client {
    w: rustdds::no_key::DataWriter<bytes::Bytes, RawOut>,
    r: rustdds::no_key::SimpleDataReader<Vec<u8>, RawIn>,
    matched: bool,
}

/// One type being asked for.
struct Ask {
    datatype: String,
    hash: String,
    /// The GUID of a publisher of it (its prefix names the participant of its node).
    writer: GUID,
    started: Instant,
    /// Nodes asked and the sequence number of the request each was sent.
    sent: BTreeMap<String, SequenceNumber>,
    /// Nodes that answered without the type, and why.
    refused: BTreeMap<String, String>,
}

/// Asks publishers' nodes for their types' descriptions, without blocking.
#[derive(Default)]
pub struct Describer {
    clients: HashMap<String, Client>,
    asks: Vec<Ask>,
    /// Outcomes by (type, hash), each asked once.
    done: HashMap<(String, String), Outcome>,
    /// When the graph's service readers were last looked at.
    last_scan: Option<Instant>,
}

/// How often the graph is looked at for the nodes to ask (each look copies every reader
/// discovered).
const SCAN_EVERY: Duration = Duration::from_millis(50);

impl Describer {
    /// Starts asking for `datatype` (`pkg/msg/Type`) with hash `hash`, as published by the
    /// writer `writer`; [`Describer::outcome`] tells when it is known.
    pub fn ask(&mut self, datatype: &str, hash: &str, writer: GUID) {
        let key = (datatype.to_string(), hash.to_string());
        if self.done.contains_key(&key)
            || self
                .asks
                .iter()
                .any(|a| a.datatype == datatype && a.hash == hash)
        {
            return;
        }
        self.asks.push(Ask {
            datatype: datatype.to_string(),
            hash: hash.to_string(),
            writer,
            started: Instant::now(),
            sent: BTreeMap::new(),
            refused: BTreeMap::new(),
        });
    }

    /// The outcome for `datatype` with `hash`, once there is one.
    pub fn outcome(&self, datatype: &str, hash: &str) -> Option<&Outcome> {
        self.done.get(&(datatype.to_string(), hash.to_string()))
    }

    /// Whether anything is still being asked.
    pub fn busy(&self) -> bool {
        !self.asks.is_empty()
    }

    /// Sends the requests that can be sent and reads the replies that came; never waits.
    pub fn poll(&mut self, p: &Participant) {
        if self.asks.is_empty() {
            return;
        }
        let nodes = if self.last_scan.is_none_or(|t| t.elapsed() >= SCAN_EVERY) {
            self.last_scan = Some(Instant::now());
            service_nodes(p)
        } else {
            Vec::new()
        };
        for a in &mut self.asks {
            for node in nodes
                .iter()
                .filter(|(reader, _)| reader.prefix == a.writer.prefix)
                .map(|(_, n)| n)
            {
                if a.sent.contains_key(node) {
                    continue;
                }
                let c = match self.clients.entry(node.clone()) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => match Client::new(p, node) {
                        Ok(c) => e.insert(c),
                        Err(err) => {
                            a.refused.insert(node.clone(), err.to_string());
                            a.sent.insert(node.clone(), SequenceNumber::UNKNOWN);
                            continue;
                        }
                    },
                };
                if !c.is_matched() {
                    continue;
                }
                match c.send(&a.datatype, &a.hash) {
                    Ok(seq) => {
                        a.sent.insert(node.clone(), seq);
                    }
                    Err(err) => {
                        a.refused.insert(node.clone(), err);
                        a.sent.insert(node.clone(), SequenceNumber::UNKNOWN);
                    }
                }
            }
        }
        // Replies.
        let mut answers: Vec<(String, Option<SequenceNumber>, Vec<u8>)> = Vec::new();
        for (node, c) in &self.clients {
            while let Ok(Some(s)) = c.r.try_take_one() {
                let related = s.related_sample_identity().map(|i| i.sequence_number);
                answers.push((node.clone(), related, s.into_value()));
            }
        }
        for (node, related, data) in answers {
            let reply = parse_reply(&data);
            let Some(a) = self.asks.iter_mut().find(|a| {
                a.sent.get(&node).is_some_and(|seq| {
                    related.map_or_else(
                        || matches!(&reply, Ok(Ok(t)) if t.0.name == a.datatype),
                        |r| r == *seq,
                    )
                })
            }) else {
                continue;
            };
            match reply.and_then(|r| r.and_then(|(root, refs)| msg_text(&root, &refs))) {
                Ok(text) => {
                    self.done.insert(
                        (a.datatype.clone(), a.hash.clone()),
                        Ok(Described {
                            text,
                            node: node.clone(),
                        }),
                    );
                }
                Err(why) => {
                    a.refused.insert(node, why);
                }
            }
        }
        // Asks answered, refused by every node asked, or out of patience.
        let done = &mut self.done;
        self.asks.retain(|a| {
            let key = (a.datatype.clone(), a.hash.clone());
            if done.contains_key(&key) {
                return false;
            }
            let all_refused = !a.sent.is_empty() && a.refused.len() == a.sent.len();
            if all_refused || a.started.elapsed() >= PATIENCE {
                let why = if a.refused.is_empty() {
                    if a.sent.is_empty() {
                        "its node offers no type description service".to_string()
                    } else {
                        format!("no answer within {} s", PATIENCE.as_secs())
                    }
                } else {
                    a.refused
                        .iter()
                        .map(|(n, w)| format!("{n}: {w}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                done.insert(key, Err(why));
                return false;
            }
            true
        });
    }
}

/// Every node that offers the service, with its request reader's GUID (whose prefix is its
/// participant's).
fn service_nodes(p: &Participant) -> Vec<(GUID, String)> {
    p.dp.discovered_readers()
        .into_iter()
        .filter_map(|r| {
            let node = node_of_request_topic(r.subscription_topic_data.topic_name())?;
            Some((r.reader_proxy.remote_reader_guid, node))
        })
        .collect()
}

impl Client {
    fn new(p: &Participant, node: &str) -> Result<Client> {
        let what = format!("asking {node} for type descriptions");
        let q = QosPolicyBuilder::new()
            .reliability(Reliability::Reliable {
                max_blocking_time: rustdds::Duration::from_millis(100),
            })
            .durability(Durability::Volatile)
            .history(History::KeepLast { depth: 10 })
            .build();
        let rq =
            p.dp.create_topic(
                format!("rq{node}/{SERVICE}Request"),
                REQUEST_TYPE.to_string(),
                &q,
                TopicKind::NoKey,
            )
            .map_err(|e| dds_err(&what, e))?;
        let rr =
            p.dp.create_topic(
                format!("rr{node}/{SERVICE}Reply"),
                REPLY_TYPE.to_string(),
                &q,
                TopicKind::NoKey,
            )
            .map_err(|e| dds_err(&what, e))?;
        let w =
            p.dp.create_publisher(&q)
                .and_then(|pb| pb.create_datawriter_no_key::<bytes::Bytes, RawOut>(&rq, None))
                .map_err(|e| dds_err(&what, e))?;
        let r =
            p.dp.create_subscriber(&q)
                .and_then(|s| s.create_simple_datareader_no_key::<Vec<u8>, RawIn>(&rr, None))
                .map_err(|e| dds_err(&what, e))?;
        Ok(Client {
            w,
            r,
            matched: false,
        })
    }

    /// Whether the node's request reader has been matched.
    fn is_matched(&mut self) -> bool {
        while let Some(s) = self.w.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = s {
                self.matched = current.count() > 0;
            }
        }
        self.matched
    }

    /// Sends a request; its sequence number names the reply.
    fn send(&self, datatype: &str, hash: &str) -> std::result::Result<SequenceNumber, String> {
        let mut b = Cdr::new();
        b.string(datatype);
        b.string(hash);
        b.u8(1); // include_type_sources
        let opts = rustdds::WriteOptionsBuilder::new()
            .related_sample_identity(SampleIdentity {
                writer_guid: self.r.guid(),
                sequence_number: SequenceNumber::UNKNOWN,
            })
            .build();
        self.w
            .write_with_options(bytes::Bytes::from(b.finish()), opts)
            .map(|id| id.sequence_number)
            .map_err(|e| format!("sending the request: {e}"))
    }
}

/// A little-endian CDR writer (after a `CDR_LE` encapsulation header).
struct Cdr(Vec<u8>);

impl Cdr {
    fn new() -> Cdr {
        Cdr(vec![0, 1, 0, 0])
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        while !(self.0.len() - 4).is_multiple_of(4) {
            self.0.push(0);
        }
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn string(&mut self, s: &str) {
        self.u32(u32::try_from(s.len() + 1).unwrap_or(u32::MAX));
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
    }
    fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// A CDR reader over a reply (encapsulation header first): every read is bounds-checked,
/// and a sequence's length is checked against the bytes left before anything is allocated.
struct Reader<'a> {
    d: &'a [u8],
    pos: usize,
    be: bool,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> std::result::Result<Reader<'a>, String> {
        match data.get(..2) {
            Some([0, 1]) => Ok(Reader {
                d: &data[4.min(data.len())..],
                pos: 0,
                be: false,
            }),
            Some([0, 0]) => Ok(Reader {
                d: &data[4.min(data.len())..],
                pos: 0,
                be: true,
            }),
            other => Err(format!(
                "the reply is not plain CDR (encapsulation {other:02x?})"
            )),
        }
    }
    fn take(&mut self, n: usize, align: usize) -> std::result::Result<&'a [u8], String> {
        self.pos = self.pos.next_multiple_of(align);
        let b = self
            .d
            .get(self.pos..self.pos.saturating_add(n))
            .ok_or_else(|| format!("the reply ends at byte {} of {}", self.pos, self.d.len()))?;
        self.pos += n;
        Ok(b)
    }
    fn u8(&mut self) -> std::result::Result<u8, String> {
        Ok(self.take(1, 1)?[0])
    }
    /// The next `N` bytes, aligned to `N`, in little-endian order.
    fn le<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        let mut b: [u8; N] = self.take(N, N)?.try_into().map_err(|_| "short")?;
        if self.be {
            b.reverse();
        }
        Ok(b)
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        self.le().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        self.le().map(u64::from_le_bytes)
    }
    fn string(&mut self) -> std::result::Result<String, String> {
        let n = self.u32()? as usize;
        let b = self.take(n, 1)?;
        let b = b.strip_suffix(&[0]).unwrap_or(b);
        String::from_utf8(b.to_vec()).map_err(|_| "a string of the reply is not UTF-8".into())
    }
    /// A sequence's length, each element taking at least `min` bytes.
    fn len(&mut self, min: usize) -> std::result::Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.d.len().saturating_sub(self.pos) {
            return Err(format!(
                "a sequence of {n} elements at byte {} is longer than the reply",
                self.pos
            ));
        }
        Ok(n)
    }
}

/// One field of a described type.
#[derive(Debug, Clone, PartialEq)]
struct FieldDesc {
    name: String,
    type_id: u8,
    capacity: u64,
    string_capacity: u64,
    nested: String,
}

/// One described type.
#[derive(Debug, Clone, PartialEq)]
struct TypeDesc {
    name: String,
    fields: Vec<FieldDesc>,
}

fn read_type(r: &mut Reader<'_>) -> std::result::Result<TypeDesc, String> {
    let name = r.string()?;
    let n = r.len(4)?;
    let mut fields = Vec::with_capacity(n);
    for _ in 0..n {
        let fname = r.string()?;
        let type_id = r.u8()?;
        let capacity = r.u64()?;
        let string_capacity = r.u64()?;
        let nested = r.string()?;
        let _default = r.string()?;
        fields.push(FieldDesc {
            name: fname,
            type_id,
            capacity,
            string_capacity,
            nested,
        });
    }
    Ok(TypeDesc { name, fields })
}

/// A reply: the outer error when it cannot be read, the inner one when the node said it
/// does not know the type.
type Reply = std::result::Result<(TypeDesc, Vec<TypeDesc>), String>;

fn parse_reply(data: &[u8]) -> std::result::Result<Reply, String> {
    let mut r = Reader::new(data)?;
    let successful = r.u8()? != 0;
    let failure = r.string()?;
    if !successful {
        return Ok(Err(if failure.is_empty() {
            "the node does not know the type".into()
        } else {
            failure
        }));
    }
    let root = read_type(&mut r)?;
    let n = r.len(8)?;
    let mut refs = Vec::with_capacity(n);
    for _ in 0..n {
        refs.push(read_type(&mut r)?);
    }
    // type_sources and extra_information follow; the fields say everything decoding needs.
    Ok(Ok((root, refs)))
}

/// The `.msg` type of a described field (`float64[9]`, `string<=10`, `geometry_msgs/msg/Point[]`).
fn field_type(f: &FieldDesc) -> std::result::Result<String, String> {
    let (base, suffix) = match f.type_id {
        1..=22 => (f.type_id, String::new()),
        49..=70 => (f.type_id - 48, format!("[{}]", f.capacity)),
        97..=118 => (f.type_id - 96, format!("[<={}]", f.capacity)),
        145..=166 => (f.type_id - 144, "[]".to_string()),
        id => return Err(format!("field {}: unknown type id {id}", f.name)),
    };
    let bounded = |t: &str| format!("{t}<={}", f.string_capacity);
    let t = match base {
        1 if !f.nested.is_empty() => f.nested.clone(),
        2 => "int8".into(),
        3 => "uint8".into(),
        4 => "int16".into(),
        5 => "uint16".into(),
        6 => "int32".into(),
        7 => "uint32".into(),
        8 => "int64".into(),
        9 => "uint64".into(),
        10 => "float32".into(),
        11 => "float64".into(),
        13 => "char".into(),
        15 => "bool".into(),
        16 => "byte".into(),
        17 => "string".into(),
        18 => "wstring".into(),
        19 | 21 => bounded("string"),
        20 | 22 => bounded("wstring"),
        other => {
            return Err(format!(
                "field {}: type id {other} has no .msg equivalent",
                f.name
            ))
        }
    };
    Ok(format!("{t}{suffix}"))
}

fn own_text(t: &TypeDesc) -> std::result::Result<String, String> {
    let mut s = String::new();
    for f in &t.fields {
        // A type without fields is described with one placeholder member, which the wire
        // holds too (`uint8 structure_needs_at_least_one_member`): kept as such.
        s.push_str(&field_type(f).map_err(|e| format!("{}: {e}", t.name))?);
        s.push(' ');
        s.push_str(&f.name);
        s.push('\n');
    }
    Ok(s)
}

/// The `.msg` text of a described type: its fields, then each type it uses.
fn msg_text(root: &TypeDesc, refs: &[TypeDesc]) -> std::result::Result<String, String> {
    let mut text = own_text(root)?;
    for t in refs {
        text.push_str(&"=".repeat(80));
        text.push_str("\nMSG: ");
        text.push_str(&t.name);
        text.push('\n');
        text.push_str(&own_text(t)?);
    }
    Ok(text)
}

/// The fields of every type of a definition, each as `name: type` lines under its type
/// (`pkg/Type`): two definitions with the same shape decode the same bytes the same way.
pub fn shape(datatype: &str, text: &str) -> Option<BTreeMap<String, Vec<String>>> {
    use bagscope_reader::definition::msg::{normalize_type, ArrayKind, Dialect, FieldType, MsgDef};
    let def = MsgDef::parse_dialect(datatype, text, Dialect::Ros2).ok()?;
    let mut out = BTreeMap::new();
    for t in &def.types {
        let fields = t
            .fields
            .iter()
            .map(|f| {
                let ty = match f.ty {
                    FieldType::Primitive(p) => p.name().to_string(),
                    FieldType::Message(i) => {
                        normalize_type(def.types.get(i).map_or("?", |t| &t.name))
                    }
                };
                let arr = match f.array {
                    ArrayKind::Scalar => String::new(),
                    ArrayKind::Fixed(n) => format!("[{n}]"),
                    ArrayKind::Variable => "[]".into(),
                };
                format!("{}: {ty}{arr}", f.name)
            })
            .collect();
        out.insert(normalize_type(&t.name), fields);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply as rcl writes it for `geometry_msgs/msg/Vector3Stamped`-like test types.
    fn reply(ok: bool, root: &TypeDesc, refs: &[TypeDesc]) -> Vec<u8> {
        let mut b = Cdr::new();
        b.u8(u8::from(ok));
        b.string(if ok { "" } else { "Type not found" });
        let ty = |b: &mut Cdr, t: &TypeDesc| {
            b.string(&t.name);
            b.u32(t.fields.len() as u32);
            for f in &t.fields {
                b.string(&f.name);
                b.u8(f.type_id);
                while !(b.0.len() - 4).is_multiple_of(8) {
                    b.0.push(0);
                }
                b.0.extend_from_slice(&f.capacity.to_le_bytes());
                b.0.extend_from_slice(&f.string_capacity.to_le_bytes());
                b.string(&f.nested);
                b.string("");
            }
        };
        ty(&mut b, root);
        b.u32(refs.len() as u32);
        for t in refs {
            ty(&mut b, t);
        }
        b.u32(0);
        b.u32(0);
        b.finish()
    }

    fn field(name: &str, type_id: u8, capacity: u64, nested: &str) -> FieldDesc {
        FieldDesc {
            name: name.into(),
            type_id,
            capacity,
            string_capacity: if matches!(type_id, 21 | 69) { 8 } else { 0 },
            nested: nested.into(),
        }
    }

    #[test]
    fn a_reply_becomes_msg_text_that_parses() {
        let root = TypeDesc {
            name: "demo_msgs/msg/Thing".into(),
            fields: vec![
                field("header", 1, 0, "std_msgs/msg/Header"),
                field("covariance", 59, 9, ""),
                field("names", 161, 0, ""),
                field("label", 21, 0, ""),
                field("few", 98, 5, ""),
                field("points", 145, 0, "geometry_msgs/msg/Point"),
            ],
        };
        let refs = vec![
            TypeDesc {
                name: "builtin_interfaces/msg/Time".into(),
                fields: vec![field("sec", 6, 0, ""), field("nanosec", 7, 0, "")],
            },
            TypeDesc {
                name: "geometry_msgs/msg/Point".into(),
                fields: vec![
                    field("x", 11, 0, ""),
                    field("y", 11, 0, ""),
                    field("z", 11, 0, ""),
                ],
            },
            TypeDesc {
                name: "std_msgs/msg/Header".into(),
                fields: vec![
                    field("stamp", 1, 0, "builtin_interfaces/msg/Time"),
                    field("frame_id", 17, 0, ""),
                ],
            },
        ];
        let data = reply(true, &root, &refs);
        let (r, rs) = parse_reply(&data).unwrap().unwrap();
        assert_eq!(r, root);
        assert_eq!(rs, refs);
        let text = msg_text(&r, &rs).unwrap();
        assert!(text.starts_with(
            "std_msgs/msg/Header header\nfloat64[9] covariance\nstring[] names\nstring<=8 label\nint8[<=5] few\ngeometry_msgs/msg/Point[] points\n"
        ));
        let s = shape("demo_msgs/msg/Thing", &text).expect("the text parses");
        assert_eq!(s.len(), 4, "{s:?}");
        assert_eq!(
            s["demo_msgs/Thing"],
            [
                "header: std_msgs/Header",
                "covariance: float64[9]",
                "names: string[]",
                "label: string",
                "few: int8[]",
                "points: geometry_msgs/Point[]"
            ]
        );
        // The shipped Header has the same shape as the described one.
        let (shipped, _) = bagscope_reader::definition::sources::lookup(
            "std_msgs/msg/Header",
            bagscope_reader::definition::msg::Dialect::Ros2,
            &[],
        )
        .unwrap();
        let described = text.split("MSG: std_msgs/msg/Header\n").nth(1).unwrap();
        let described = format!(
            "{described}{}\nMSG: builtin_interfaces/msg/Time\nint32 sec\nuint32 nanosec\n",
            "=".repeat(80)
        );
        assert_eq!(
            shape("std_msgs/msg/Header", &shipped),
            shape("std_msgs/msg/Header", &described)
        );
    }

    #[test]
    fn a_refusal_and_broken_replies_are_told_apart() {
        let t = TypeDesc {
            name: "a/msg/B".into(),
            fields: vec![],
        };
        assert_eq!(
            parse_reply(&reply(false, &t, &[])).unwrap(),
            Err("Type not found".to_string())
        );
        let good = reply(true, &t, &[]);
        for cut in 0..good.len() - 8 {
            // Cut anywhere before the trailing empty sequences: an error, never a panic.
            let _ = parse_reply(&good[..cut]);
        }
        // A sequence claiming more elements than bytes is refused before allocating.
        let mut huge = Cdr::new();
        huge.u8(1);
        huge.string("");
        huge.string("a/msg/B");
        huge.u32(u32::MAX);
        assert!(parse_reply(&huge.finish())
            .unwrap_err()
            .contains("longer than the reply"));
        assert!(parse_reply(&[1, 2, 3]).is_err());
        let bad = TypeDesc {
            name: "a/msg/B".into(),
            fields: vec![field("x", 12, 0, "")],
        };
        assert!(msg_text(&bad, &[])
            .unwrap_err()
            .contains("no .msg equivalent"));
    }

    #[test]
    fn hashes_and_nodes_are_read_from_what_discovery_says() {
        assert_eq!(
            type_hash(b"typehash=RIHS01_abc;").as_deref(),
            Some("RIHS01_abc")
        );
        assert_eq!(
            type_hash(b"x=1;typehash=RIHS01_d;y=2;").as_deref(),
            Some("RIHS01_d")
        );
        assert_eq!(type_hash(b""), None);
        // As RustDDS hands it over: a length, the octets, padding.
        assert_eq!(
            type_hash(b"Q\0\0\0typehash=RIHS01_02ab;\0\0\0").as_deref(),
            Some("RIHS01_02ab")
        );
        assert_eq!(type_hash(&[0xff, 0xfe]), None);
        assert_eq!(
            node_of_request_topic("rq/ns/talker/get_type_descriptionRequest").as_deref(),
            Some("/ns/talker")
        );
        assert_eq!(
            node_of_request_topic("rq/talker/get_parametersRequest"),
            None
        );
    }
}
