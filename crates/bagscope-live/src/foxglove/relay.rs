//! `serve --ros1` and `serve --ros2`: a live ROS 1 graph or ROS 2 domain relayed to Foxglove
//! clients. One thread owns the node (or DDS participant): it subscribes to the topics wanted
//! as their publishers appear (looking again every half second), makes a channel of each
//! publisher's type and definition as they appear (ROS 2: the publisher's node's type
//! description where it offers one, as `record --ros2` does), and hands every message to each
//! connected client's bounded queue (a client that cannot keep up loses messages, never the
//! hub's time or memory).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::Result;
use bagscope_reader::storage::Bytes;

use super::protocol::Channel;
use crate::record::Select;
use crate::ros1::Node;
use crate::ros2::Participant;
use crate::source::{Ros1Source, Ros2Source, Source, DISCOVER_EVERY};

/// What the hub tells a session.
pub(super) enum Event {
    /// A channel appeared (its index among the hub's channels, and it).
    Channel(usize, Channel),
    /// A message on a channel: its index, receive time, bytes.
    Message(usize, u64, Bytes),
}

/// Events queued for one client at most; past this its messages are dropped.
const CLIENT_EVENTS: usize = 16_384;

#[derive(Default)]
struct State {
    channels: Vec<Channel>,
    /// topic → its channels' (encoding, type, definition) and index.
    keys: HashMap<String, Vec<(&'static str, String, String, usize)>>,
    clients: Vec<SyncSender<Event>>,
}

/// The live graph's channels and the clients listening.
#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
    dropped: std::sync::atomic::AtomicU64,
}

impl Hub {
    /// A client's feed: every channel so far, then what comes.
    pub(super) fn register(&self) -> Receiver<Event> {
        let (tx, rx) = sync_channel(CLIENT_EVENTS);
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for (i, c) in st.channels.iter().enumerate() {
            // The queue is new and larger than any channel list a graph has.
            let _ = tx.try_send(Event::Channel(i, c.clone()));
        }
        st.clients.push(tx);
        rx
    }

    /// Messages dropped for clients that did not keep up.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn message(
        &self,
        topic: &str,
        encoding: &'static str,
        datatype: &str,
        def: &str,
        t: u64,
        d: &[u8],
    ) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let known = st.keys.get(topic).and_then(|cs| {
            cs.iter()
                .find(|(e, ty, df, _)| *e == encoding && ty == datatype && df == def)
                .map(|c| c.3)
        });
        let i = match known {
            Some(i) => i,
            None => {
                let i = st.channels.len();
                let c = Channel {
                    id: i as u64 + 1,
                    topic: topic.to_string(),
                    encoding: encoding.to_string(),
                    schema_name: datatype.to_string(),
                    // A type without a definition (none known): named, no schema.
                    schema_encoding: match encoding {
                        _ if def.is_empty() => "",
                        "cdr" => "ros2msg",
                        _ => "ros1msg",
                    }
                    .into(),
                    schema: def.as_bytes().to_vec(),
                };
                st.channels.push(c.clone());
                st.keys.entry(topic.to_string()).or_default().push((
                    encoding,
                    datatype.to_string(),
                    def.to_string(),
                    i,
                ));
                // A new channel reaches every client (a full queue: that client is closed).
                st.clients
                    .retain(|tx| tx.try_send(Event::Channel(i, c.clone())).is_ok());
                i
            }
        };
        let data = Bytes::from_vec(d.to_vec());
        let mut dropped = 0;
        st.clients
            .retain(|tx| match tx.try_send(Event::Message(i, t, data.clone())) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    dropped += 1;
                    true
                }
                Err(TrySendError::Disconnected(_)) => false,
            });
        self.dropped.fetch_add(dropped, Ordering::Relaxed);
    }
}

/// Relays `node`'s graph into `hub` until `stop` (or the master asks the node to shut down):
/// the topics `select` wants.
pub fn run_ros1(node: &Node, hub: &Hub, select: &Select, stop: &AtomicBool) -> Result<()> {
    relay(
        &mut Ros1Source::new(node, select)?,
        hub,
        select,
        stop,
        &mut |_| {},
    )
}

/// Relays the DDS domain `participant` is on into `hub` until `stop`: the topics `select`
/// wants. `on_note` hears how a topic's type came (its publisher's description, or none);
/// definitions are searched in `msg_path` first.
pub fn run_ros2(
    participant: &Participant,
    hub: &Hub,
    select: &Select,
    msg_path: &[std::path::PathBuf],
    stop: &AtomicBool,
    on_note: &mut dyn FnMut(&str),
) -> Result<()> {
    relay(
        &mut Ros2Source::new(participant, msg_path),
        hub,
        select,
        stop,
        on_note,
    )
}

fn relay(
    source: &mut dyn Source,
    hub: &Hub,
    select: &Select,
    stop: &AtomicBool,
    on_note: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut looked = None::<Instant>;
    while !stop.load(Ordering::Relaxed) && !source.shutdown_requested() {
        if looked.is_none_or(|t| t.elapsed() >= DISCOVER_EVERY) {
            source.discover(select)?;
            looked = Some(Instant::now());
        }
        source.receive(Duration::from_millis(100), &mut |k, t, d| {
            hub.message(&k.topic, k.encoding, &k.datatype, &k.definition, t, d);
            Ok(())
        })?;
        for n in source.take_notes() {
            on_note(&n);
        }
    }
    Ok(())
}
