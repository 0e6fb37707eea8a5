//! Serving a recording to Foxglove clients (`bagscope serve`): the Foxglove WebSocket protocol
//! over a WebSocket of our own (`ws`), its messages (`protocol`), one session a client with its
//! own subscriptions and playback (`session`), and the listener that accepts them (this file).
//!
//! Channels are the recording's connections grouped by topic, encoding and schema; messages go
//! out as stored (no re-encoding). Each client plays the recording on its own clock: it starts
//! once the client has subscribed (or paused, with [`ServeOptions::paused`]), at
//! [`ServeOptions::speed`]; a client that sent a playback control request (`foxglove.sdk.v1`)
//! plays, pauses, seeks and changes speed, and only such a client is sent `playbackState`.
//! What waits to be written to a client is bounded ([`ServeOptions::queue_bytes`]); past that
//! its messages are dropped and it is told so.

pub mod protocol;
pub mod relay;
mod session;
pub mod ws;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::{Error, Result};
use bagscope_reader::bag::Bag;
use bagscope_reader::definition::sources::definition_of;

pub use protocol::Channel;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to bind (127.0.0.1 unless told otherwise).
    pub host: String,
    /// Port (0: any free one; [`Server::local_addr`] says which).
    pub port: u16,
    /// Playback speed a client starts with: 1 is as recorded.
    pub speed: f64,
    /// Start again from the beginning at the end.
    pub looped: bool,
    /// Clients start paused (a playback control request plays).
    pub paused: bool,
    /// Clients served at once; more are refused (HTTP 503).
    pub max_clients: usize,
    /// Bytes queued for one client before its messages are dropped.
    pub queue_bytes: usize,
    /// The largest message a client may send.
    pub max_client_message: usize,
    /// The name in `serverInfo`.
    pub name: String,
    /// Only these connections (indexes into the recording's); all when None.
    pub connections: Option<Vec<usize>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            host: "127.0.0.1".into(),
            port: 8765,
            speed: 1.0,
            looped: false,
            paused: false,
            max_clients: 32,
            queue_bytes: 64 << 20,
            max_client_message: 1 << 20,
            name: "bagscope".into(),
            connections: None,
        }
    }
}

/// What every session reads: the recording, its channels, the options; or the live graph.
pub(crate) struct Shared {
    /// The recording served (None: a live graph, `live`).
    pub bag: Option<Arc<Bag>>,
    /// The live graph relayed.
    pub live: Option<Arc<relay::Hub>>,
    pub channels: Vec<Channel>,
    /// A connection's channel (index into `channels`), for each connection of the recording
    /// (None: not served).
    pub channel_of: Vec<Option<usize>>,
    /// The recording's first and last message times.
    pub range: (u64, u64),
    pub opts: ServeOptions,
}

/// The channels of `bag`'s connections `only` (all when None): grouped by topic, encoding,
/// type and schema; with each connection's channel.
pub fn channels_of(bag: &Bag, only: Option<&[usize]>) -> (Vec<Channel>, Vec<Option<usize>>) {
    let mut channels: Vec<Channel> = Vec::new();
    let mut seen: HashMap<(String, String, String, Vec<u8>), usize> = HashMap::new();
    let mut channel_of = Vec::new();
    for (ci, c) in bag.summary().connections.iter().enumerate() {
        if only.is_some_and(|o| !o.contains(&ci)) {
            channel_of.push(None);
            continue;
        }
        let (schema, schema_encoding) = if c.schema_data.is_empty() {
            // The stored definition, or the one bagscope resolves where none was stored (a
            // client cannot decode ros1 or cdr without one); an empty one (std_msgs/Empty)
            // stays as stored.
            let (text, lang) = definition_of(c, &bag.options().msg_path);
            if text.trim().is_empty() {
                (c.message_definition.clone().into_bytes(), lang)
            } else {
                (text.into_bytes(), lang)
            }
        } else {
            (c.schema_data.clone(), c.schema_encoding.clone())
        };
        let key = (
            c.topic.clone(),
            c.encoding.clone(),
            c.datatype.clone(),
            schema.clone(),
        );
        let next = channels.len();
        let i = *seen.entry(key).or_insert(next);
        if i == next {
            channels.push(Channel {
                id: next as u64 + 1,
                topic: c.topic.clone(),
                encoding: c.encoding.clone(),
                schema_name: c.datatype.clone(),
                schema_encoding,
                schema,
            });
        }
        channel_of.push(Some(i));
    }
    (channels, channel_of)
}

/// A bound server: [`Server::run`] accepts clients until stopped.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    clients: Arc<Mutex<Vec<TcpStream>>>,
    active: Arc<AtomicUsize>,
}

impl Server {
    /// Binds `opts.host:opts.port` to serve `bag`.
    pub fn bind(bag: Arc<Bag>, opts: ServeOptions) -> Result<Server> {
        if !(opts.speed.is_finite() && opts.speed > 0.0) {
            return Err(Error::Invalid(format!(
                "the speed must be a positive number, not {}",
                opts.speed
            )));
        }
        let (channels, channel_of) = channels_of(&bag, opts.connections.as_deref());
        let s = bag.summary();
        let range = (s.start_ns.unwrap_or(0), s.end_ns.unwrap_or(0));
        Server::listen(Shared {
            bag: Some(bag),
            live: None,
            channels,
            channel_of,
            range,
            opts,
        })
    }

    /// Binds `opts.host:opts.port` to relay what `hub` receives from a live graph
    /// ([`relay::run_ros1`] feeds it): channels as publishers appear, messages as they arrive.
    pub fn bind_live(hub: Arc<relay::Hub>, opts: ServeOptions) -> Result<Server> {
        Server::listen(Shared {
            bag: None,
            live: Some(hub),
            channels: Vec::new(),
            channel_of: Vec::new(),
            range: (0, 0),
            opts,
        })
    }

    fn listen(shared: Shared) -> Result<Server> {
        let opts = &shared.opts;
        let listener = TcpListener::bind((opts.host.as_str(), opts.port)).map_err(|e| {
            Error::Invalid(format!("cannot listen on {}:{}: {e}", opts.host, opts.port))
        })?;
        listener.set_nonblocking(true)?;
        Ok(Server {
            listener,
            shared: Arc::new(shared),
            clients: Arc::default(),
            active: Arc::default(),
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// The channels advertised.
    pub fn channels(&self) -> &[Channel] {
        &self.shared.channels
    }

    /// Accepts and serves clients (a thread each) until `stop`; then closes every connection.
    pub fn run(&self, stop: &AtomicBool) -> Result<()> {
        let stopping = Arc::new(AtomicBool::new(false));
        while !stop.load(Ordering::Relaxed) {
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_nodelay(true);
            if let Ok(s) = stream.try_clone() {
                let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
                // Forget the connections that have ended (shutting them down again is harmless).
                clients.retain(|c| c.peer_addr().is_ok());
                clients.push(s);
            }
            let full = self.active.load(Ordering::SeqCst) >= self.shared.opts.max_clients;
            let (shared, active, stopping) = (
                Arc::clone(&self.shared),
                Arc::clone(&self.active),
                Arc::clone(&stopping),
            );
            active.fetch_add(1, Ordering::SeqCst);
            let spawned = std::thread::Builder::new()
                .name(format!("bagscope-serve-{peer}"))
                .spawn(move || {
                    session::run(stream, &shared, full, &stopping);
                    active.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                self.active.fetch_sub(1, Ordering::SeqCst);
            }
        }
        stopping.store(true, Ordering::SeqCst);
        for c in self
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
        Ok(())
    }

    /// Clients being served now.
    pub fn clients(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    /// The count [`Server::clients`] reads, for another thread to read while this one runs.
    pub fn clients_handle(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.active)
    }
}
