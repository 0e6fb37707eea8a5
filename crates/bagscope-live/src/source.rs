//! Where a live recorder's and relay's messages come from: a ROS 1 node's or a DDS
//! participant's subscriptions, made as publishers appear, each message handed over with
//! its connection (type, definition, QoS) as a file records it. `bagscope record` writes
//! what a [`Source`] receives; `bagscope serve --ros1/--ros2` relays it to Foxglove clients.

use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::ros1::{Node, Received};
use super::ros2::typedesc::{self, Describer, Outcome};
use super::ros2::{Endpoint, Participant, Qos, Sample, Subscription};
use crate::Result;
use bagscope_reader::definition::msg::Dialect;
use bagscope_reader::definition::sources::lookup;

/// How often a graph is asked for new topics.
pub(crate) const DISCOVER_EVERY: Duration = Duration::from_millis(500);
/// Messages received and not yet handed over before the receiving threads wait.
const BACKLOG: usize = 1 << 16;

/// Which topics to record (or relay).
pub enum Select {
    /// These topics.
    Topics(Vec<String>),
    /// Every topic whose name matches one of these (and the topics named).
    Matching(Vec<String>, Vec<regex::Regex>),
    /// Every topic.
    All,
    /// Every topic but these (the app's Live: those seen and not picked).
    Except(Vec<String>),
}

impl Select {
    pub(crate) fn wants(&self, topic: &str) -> bool {
        match self {
            Select::Topics(t) => t.iter().any(|x| x == topic),
            Select::Matching(t, r) => {
                t.iter().any(|x| x == topic) || r.iter().any(|r| r.is_match(topic))
            }
            Select::All => true,
            Select::Except(t) => !t.iter().any(|x| x == topic),
        }
    }

    pub(crate) fn named(&self) -> &[String] {
        match self {
            Select::Topics(t) | Select::Matching(t, _) => t,
            Select::All | Select::Except(_) => &[],
        }
    }

    pub(crate) fn discovers(&self) -> bool {
        !matches!(self, Select::Topics(_))
    }
}

/// One publisher's connection as a file records it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct ConnKey {
    pub(crate) topic: String,
    pub(crate) datatype: String,
    /// `ros1` or `cdr`.
    pub(crate) encoding: &'static str,
    pub(crate) md5sum: String,
    pub(crate) definition: String,
    pub(crate) callerid: String,
    pub(crate) latching: bool,
    /// ROS 2: the publishers' QoS as rosbag2 records it (`offered_qos_profiles`).
    pub(crate) qos: String,
    /// ROS 2: the type's hash as a publisher announced it (`RIHS01_…`), or empty.
    pub(crate) type_hash: String,
}

impl ConnKey {
    /// A ROS 1 connection, from its publisher's connection header.
    fn ros1(m: &Received) -> ConnKey {
        let h = &m.header;
        ConnKey {
            topic: m.topic.clone(),
            datatype: h.get("type").unwrap_or("").to_string(),
            encoding: "ros1",
            md5sum: h.get("md5sum").unwrap_or("").to_string(),
            definition: h.get("message_definition").unwrap_or("").to_string(),
            callerid: h.get("callerid").unwrap_or("").to_string(),
            latching: h.get("latching") == Some("1"),
            qos: String::new(),
            type_hash: String::new(),
        }
    }
}

/// What a source hands each message to: its connection, receive time and bytes.
pub(crate) type OnMessage<'a> = dyn FnMut(&ConnKey, u64, &[u8]) -> Result<()> + 'a;

/// Where messages come from: a live graph's subscriptions (a recorder's, or `serve --ros1`'s).
pub(crate) trait Source {
    /// The MCAP profile of what it receives (`ros1`, `ros2`).
    fn profile(&self) -> &'static str;
    /// Subscribes to the topics `select` wants among those published now.
    fn discover(&mut self, select: &Select) -> Result<()>;
    /// Waits up to `wait` for messages and hands over those that arrived (a bounded batch).
    fn receive(&mut self, wait: Duration, f: &mut OnMessage<'_>) -> Result<()>;
    /// Hands over what has arrived without waiting (at the end).
    fn rest(&mut self, f: &mut OnMessage<'_>) -> Result<()>;
    /// Whether the graph asked the recorder to stop.
    fn shutdown_requested(&self) -> bool {
        false
    }
    /// What the user should know of how topics came (a type without its definition), said
    /// once each: taken from the source.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A ROS 1 node's subscriptions.
pub(crate) struct Ros1Source<'a> {
    node: &'a Node,
    tx: mpsc::SyncSender<Received>,
    rx: mpsc::Receiver<Received>,
    subscribed: HashSet<String>,
}

impl<'a> Ros1Source<'a> {
    /// `node`'s subscriptions: to the topics `select` names now (whether published yet or
    /// not), to others as [`Source::discover`] finds them.
    pub(crate) fn new(node: &'a Node, select: &Select) -> Result<Self> {
        let (tx, rx) = mpsc::sync_channel::<Received>(BACKLOG);
        for t in select.named() {
            node.subscribe(t, tx.clone())?;
        }
        Ok(Ros1Source {
            node,
            tx,
            rx,
            subscribed: select.named().iter().cloned().collect(),
        })
    }
}

impl Source for Ros1Source<'_> {
    fn profile(&self) -> &'static str {
        "ros1"
    }

    fn discover(&mut self, select: &Select) -> Result<()> {
        for (topic, _) in self.node.published_topics()? {
            if select.wants(&topic) && self.subscribed.insert(topic.clone()) {
                self.node.subscribe(&topic, self.tx.clone())?;
            }
        }
        Ok(())
    }

    fn receive(&mut self, wait: Duration, f: &mut OnMessage<'_>) -> Result<()> {
        match self.rx.recv_timeout(wait) {
            Ok(m) => {
                f(&ConnKey::ros1(&m), m.time_ns, &m.data)?;
                // Whatever else has arrived, before looking at the clock again.
                for _ in 0..4096 {
                    match self.rx.try_recv() {
                        Ok(m) => f(&ConnKey::ros1(&m), m.time_ns, &m.data)?,
                        Err(_) => break,
                    }
                }
                Ok(())
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => Ok(()),
        }
    }

    fn rest(&mut self, f: &mut OnMessage<'_>) -> Result<()> {
        while let Ok(m) = self.rx.try_recv() {
            f(&ConnKey::ros1(&m), m.time_ns, &m.data)?;
        }
        Ok(())
    }

    fn shutdown_requested(&self) -> bool {
        self.node.shutdown_requested()
    }
}

/// A DDS participant's subscriptions (ROS 2).
pub(crate) struct Ros2Source<'a> {
    participant: &'a Participant,
    subs: Vec<(Subscription, ConnKey)>,
    /// Subscriptions whose definition is being asked of the publisher's node: what arrives
    /// meanwhile is kept here with its receive time and written once the definition is known.
    pending: Vec<Pending>,
    describer: Describer,
    subscribed: HashSet<String>,
    notes: Vec<String>,
    /// Directories searched first for definitions.
    msg_path: Vec<std::path::PathBuf>,
}

/// A subscription waiting for its publisher's type description.
struct Pending {
    sub: Subscription,
    key: ConnKey,
    hash: String,
    held: Vec<Sample>,
    held_bytes: usize,
}

/// Messages of a topic held while its type description is asked for, at most: past this
/// the search path's or the shipped definition is used.
const HELD_MAX_BYTES: usize = 64 << 20;

impl<'a> Ros2Source<'a> {
    /// `participant`'s subscriptions, none yet ([`Source::discover`] makes them once a
    /// publisher of a topic is seen: its type and QoS are what the subscription asks for).
    pub(crate) fn new(participant: &'a Participant, msg_path: &[std::path::PathBuf]) -> Self {
        Ros2Source {
            msg_path: msg_path.to_vec(),
            participant,
            subs: Vec::new(),
            pending: Vec::new(),
            describer: Describer::default(),
            subscribed: HashSet::new(),
            notes: Vec::new(),
        }
    }

    /// Subscribes to `topic`, asking for what its publishers offer.
    fn subscribe(&mut self, topic: &str, offers: &[Endpoint]) -> Result<()> {
        let Some(first) = offers.first() else {
            return Ok(());
        };
        let datatype = first.datatype.clone();
        let qos: Vec<Qos> = offers.iter().map(|e| e.qos).collect();
        let sub = self
            .participant
            .subscribe(topic, &datatype, &Qos::requested(&qos))?;
        // What the publishers offered, as rosbag2 records it.
        let mut recorded = String::new();
        for q in &qos {
            recorded.push_str(&q.to_recorded());
        }
        let key = ConnKey {
            topic: topic.to_string(),
            datatype,
            encoding: "cdr",
            md5sum: String::new(),
            definition: String::new(),
            callerid: String::new(),
            latching: false,
            qos: recorded,
            type_hash: offers
                .iter()
                .find_map(|e| e.type_hash.clone())
                .unwrap_or_default(),
        };
        // The publisher's own description of its type comes first, where its node offers
        // one (ROS 2 Iron and later announce the type's hash).
        if let Some((e, hash)) = offers.iter().find_map(|e| Some((e, e.type_hash.clone()?))) {
            self.describer.ask(&key.datatype, &hash, e.guid);
            self.pending.push(Pending {
                sub,
                key,
                hash,
                held: Vec::new(),
                held_bytes: 0,
            });
            return Ok(());
        }
        let key = self.with_definition(key, None);
        self.subs.push((sub, key));
        Ok(())
    }

    /// `key` with its definition: the publisher's node's description where there is one
    /// (the search path's or shipped text instead where it has the same fields, for its
    /// constants and comments), else the search path's or the shipped one, else none (raw).
    fn with_definition(&mut self, mut key: ConnKey, described: Option<&Outcome>) -> ConnKey {
        let local = lookup(&key.datatype, Dialect::Ros2, &self.msg_path).map(|(text, _)| text);
        let (topic, datatype) = (&key.topic, &key.datatype);
        key.definition = match (described, local) {
            (Some(Ok(d)), Some(local))
                if typedesc::shape(datatype, &local) == typedesc::shape(datatype, &d.text) =>
            {
                local
            }
            (Some(Ok(d)), local) => {
                self.notes.push(format!(
                    "{topic}: definition of {datatype} from its publisher's node {}{}",
                    d.node,
                    if local.is_some() {
                        " (its fields differ from the search path's or shipped definition)"
                    } else {
                        ""
                    }
                ));
                d.text.clone()
            }
            (_, Some(local)) => local,
            (outcome, None) => {
                let why = match outcome {
                    Some(Err(why)) => {
                        format!(" and its publisher's node did not describe it ({why})")
                    }
                    _ => String::new(),
                };
                self.notes.push(format!(
                    "{topic}: no definition of {datatype} on the search path or shipped{why}: recorded raw (its type named, no schema)"
                ));
                String::new()
            }
        };
        key
    }

    /// Asks on for type descriptions; topics whose definition is known (or given up on) are
    /// recorded from now on, what they held written first.
    fn settle_pending(&mut self, f: &mut OnMessage<'_>) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.describer.poll(self.participant);
        let mut i = 0;
        while i < self.pending.len() {
            let p = &mut self.pending[i];
            for s in p.sub.take(4096)? {
                p.held_bytes += s.data.len();
                p.held.push(s);
            }
            let outcome = self.describer.outcome(&p.key.datatype, &p.hash).cloned();
            if outcome.is_none() && p.held_bytes < HELD_MAX_BYTES {
                i += 1;
                continue;
            }
            let p = self.pending.swap_remove(i);
            let key = self.with_definition(p.key, outcome.as_ref());
            for s in &p.held {
                f(&key, s.time_ns, &s.data)?;
            }
            self.subs.push((p.sub, key));
        }
        Ok(())
    }
}

impl Source for Ros2Source<'_> {
    fn profile(&self) -> &'static str {
        "ros2"
    }

    fn discover(&mut self, select: &Select) -> Result<()> {
        let mut by_topic: BTreeMap<String, Vec<Endpoint>> = BTreeMap::new();
        for e in self.participant.publishers() {
            by_topic.entry(e.topic.clone()).or_default().push(e);
        }
        for (topic, offers) in by_topic {
            let named = select.named().contains(&topic);
            if (named || (select.discovers() && select.wants(&topic)))
                && self.subscribed.insert(topic.clone())
            {
                self.subscribe(&topic, &offers)?;
            }
        }
        Ok(())
    }

    fn receive(&mut self, wait: Duration, f: &mut OnMessage<'_>) -> Result<()> {
        let until = Instant::now() + wait;
        loop {
            self.settle_pending(f)?;
            let mut got = 0usize;
            for (sub, key) in &mut self.subs {
                for s in sub.take(4096)? {
                    f(key, s.time_ns, &s.data)?;
                    got += 1;
                }
            }
            if got > 0 || Instant::now() >= until {
                return Ok(());
            }
            // DDS readers are polled: a millisecond's sleep between empty polls.
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn rest(&mut self, f: &mut OnMessage<'_>) -> Result<()> {
        // Descriptions still asked for are waited for (each gives up after its patience).
        while !self.pending.is_empty() {
            self.settle_pending(f)?;
            std::thread::sleep(Duration::from_millis(5));
        }
        for (sub, key) in &mut self.subs {
            loop {
                let batch = sub.take(4096)?;
                if batch.is_empty() {
                    break;
                }
                for s in batch {
                    f(key, s.time_ns, &s.data)?;
                }
            }
        }
        Ok(())
    }
}
