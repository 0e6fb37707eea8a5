//! A ROS 1 node without a ROS install: registered with the master over XML-RPC, serving the
//! node API (`requestTopic`, `publisherUpdate`, bus info) and TCPROS. Publications send to
//! every connected subscriber through a bounded queue of its own (a slow subscriber holds up
//! the publisher rather than losing messages); subscriptions connect to every publisher the
//! master names and hand each message on with its publisher's connection header.

use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::now_ns;

use super::tcpros::{self, Header};
use super::xmlrpc::{self, live_err, Value};
use crate::{Error, Result};
use bagscope_reader::storage::Bytes;

/// Messages queued for one subscriber before the publisher waits for it.
const QUEUE: usize = 1024;

/// Where a node registers and how it names itself.
#[derive(Debug, Clone)]
pub struct NodeOptions {
    /// The node's name (`/bagscope_play_1234`).
    pub name: String,
    /// The master's XML-RPC address (`http://127.0.0.1:11311/`).
    pub master: String,
    /// The host name or address the node announces (and listens on).
    pub host: String,
}

impl NodeOptions {
    /// A node called `base` and the process id, with the master of `master` or else
    /// `ROS_MASTER_URI` (else `http://localhost:11311/`), announcing `ROS_IP` or
    /// `ROS_HOSTNAME` (else 127.0.0.1 for a master on this machine, the host name otherwise).
    pub fn from_env(base: &str, master: Option<&str>) -> NodeOptions {
        let master = master
            .map(str::to_string)
            .or_else(|| std::env::var("ROS_MASTER_URI").ok())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "http://localhost:11311/".into());
        let master = if master.starts_with("http://") {
            master
        } else {
            format!("http://{master}")
        };
        let host = std::env::var("ROS_IP")
            .ok()
            .or_else(|| std::env::var("ROS_HOSTNAME").ok())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| {
                let local = xmlrpc::split_uri(&master).is_some_and(|(hp, _)| {
                    hp.starts_with("127.")
                        || hp.starts_with("localhost:")
                        || hp.starts_with("[::1]")
                });
                if local {
                    "127.0.0.1".into()
                } else {
                    std::fs::read_to_string("/proc/sys/kernel/hostname")
                        .map(|h| h.trim().to_string())
                        .unwrap_or_else(|_| "127.0.0.1".into())
                }
            });
        NodeOptions {
            name: format!("/{base}_{}", std::process::id()),
            master,
            host,
        }
    }
}

/// What a publication offers.
#[derive(Debug, Clone, Default)]
pub struct TopicSpec {
    /// Topic name.
    pub topic: String,
    /// `pkg/Type`.
    pub datatype: String,
    /// The type's md5sum.
    pub md5sum: String,
    /// The full message definition.
    pub definition: String,
    /// Whether the last message goes to each new subscriber.
    pub latching: bool,
}

/// One connected subscriber of a publication.
struct Link {
    callerid: String,
    tx: SyncSender<Bytes>,
    alive: Arc<AtomicBool>,
    /// Messages handed to the link and not yet written to its socket.
    pending: Arc<AtomicU64>,
    id: u64,
}

/// A topic this node publishes.
pub struct Publication {
    spec: TopicSpec,
    links: Mutex<Vec<Link>>,
    last: Mutex<Option<Bytes>>,
    published: AtomicU64,
}

impl Publication {
    /// The topic and type it publishes.
    pub fn spec(&self) -> &TopicSpec {
        &self.spec
    }

    /// Subscribers connected now.
    pub fn subscribers(&self) -> usize {
        let mut links = lock(&self.links);
        links.retain(|l| l.alive.load(Ordering::Relaxed));
        links.len()
    }

    /// Messages published.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// Sends `data` to every connected subscriber (waiting while a subscriber's queue is full;
    /// a subscriber that went away is dropped). A latching publication keeps it for later
    /// subscribers.
    pub fn publish(&self, data: &Bytes) {
        let data = data.clone().detach();
        if self.spec.latching {
            *lock(&self.last) = Some(data.clone());
        }
        self.published.fetch_add(1, Ordering::Relaxed);
        let mut links = lock(&self.links);
        links.retain(|l| {
            if !l.alive.load(Ordering::Relaxed) {
                return false;
            }
            l.pending.fetch_add(1, Ordering::Relaxed);
            match l.tx.try_send(data.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(d)) => l.tx.send(d).is_ok(),
                Err(TrySendError::Disconnected(_)) => false,
            }
        });
    }

    /// Waits until every subscriber's queue is written out, at most `timeout`.
    pub fn drain(&self, timeout: Duration) {
        let end = Instant::now() + timeout;
        loop {
            let busy = lock(&self.links)
                .iter()
                .any(|l| l.alive.load(Ordering::Relaxed) && l.pending.load(Ordering::Relaxed) > 0);
            if !busy || Instant::now() >= end {
                return;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }
}

/// A message received on a subscription.
#[derive(Debug)]
pub struct Received {
    /// The subscription's topic.
    pub topic: String,
    /// The publisher's connection header (type, md5sum, message_definition, callerid,
    /// latching).
    pub header: Arc<Header>,
    /// When it arrived, ns since the epoch.
    pub time_ns: u64,
    /// The message as sent.
    pub data: Vec<u8>,
}

/// A topic this node subscribes to.
struct Subscription {
    datatype: String,
    tx: SyncSender<Received>,
    /// Publishers' XML-RPC addresses connected (or connecting).
    publishers: Mutex<HashSet<String>>,
}

struct Inner {
    opts: NodeOptions,
    api: Mutex<String>,
    tcp_port: u16,
    pubs: Mutex<HashMap<String, Arc<Publication>>>,
    subs: Mutex<HashMap<String, Arc<Subscription>>>,
    shutdown: AtomicBool,
    next_link: AtomicU64,
}

/// A ROS 1 node: registered with the master until dropped.
pub struct Node {
    inner: Arc<Inner>,
    server: Option<xmlrpc::Server>,
    tcp_addr: SocketAddr,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Node {
    /// Starts the node's servers and checks that the master answers.
    pub fn start(opts: NodeOptions) -> Result<Node> {
        let listener = TcpListener::bind((xmlrpc::bind_host(&opts.host), 0))?;
        let tcp_addr = listener.local_addr()?;
        let inner = Arc::new(Inner {
            opts,
            api: Mutex::new(String::new()),
            tcp_port: tcp_addr.port(),
            pubs: Mutex::new(HashMap::new()),
            subs: Mutex::new(HashMap::new()),
            shutdown: AtomicBool::new(false),
            next_link: AtomicU64::new(1),
        });
        let weak = Arc::downgrade(&inner);
        let handler: Arc<xmlrpc::Handler> = Arc::new(move |method, params| match weak.upgrade() {
            Some(inner) => Ok(Inner::answer(&inner, method, params)),
            None => Err("the node has shut down".into()),
        });
        let server = xmlrpc::Server::start(&inner.opts.host, handler)?;
        *lock(&inner.api) = server.uri().to_string();
        let weak = Arc::downgrade(&inner);
        thread::Builder::new()
            .name("bagscope-tcpros".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    let Some(inner) = weak.upgrade() else { break };
                    if inner.shutdown.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let _ = thread::Builder::new()
                        .name("bagscope-tcpros-in".into())
                        .spawn(move || inner.accept(conn));
                }
            })?;
        let node = Node {
            inner,
            server: Some(server),
            tcp_addr,
        };
        // The master answers, or the error says where it was looked for.
        node.master("getUri", vec![])?;
        Ok(node)
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.inner.opts.name
    }

    /// The master's address.
    pub fn master_uri(&self) -> &str {
        &self.inner.opts.master
    }

    /// Whether a caller asked the node to shut down (`rosnode kill`).
    pub fn shutdown_requested(&self) -> bool {
        self.inner.shutdown.load(Ordering::Relaxed)
    }

    fn master(&self, method: &str, mut params: Vec<Value>) -> Result<Value> {
        self.inner.master(method, &mut params)
    }

    /// Advertises a topic and registers it with the master.
    pub fn advertise(&self, spec: TopicSpec) -> Result<Arc<Publication>> {
        let topic = spec.topic.clone();
        let datatype = spec.datatype.clone();
        let p = Arc::new(Publication {
            spec,
            links: Mutex::new(Vec::new()),
            last: Mutex::new(None),
            published: AtomicU64::new(0),
        });
        lock(&self.inner.pubs).insert(topic.clone(), p.clone());
        let api = lock(&self.inner.api).clone();
        self.master(
            "registerPublisher",
            vec![Value::str(topic), Value::str(datatype), Value::str(api)],
        )?;
        Ok(p)
    }

    /// Subscribes to `topic` (any type), handing every message to `tx`; connects to the
    /// publishers the master names now and later.
    pub fn subscribe(&self, topic: &str, tx: SyncSender<Received>) -> Result<()> {
        if lock(&self.inner.subs).contains_key(topic) {
            return Ok(());
        }
        let sub = Arc::new(Subscription {
            datatype: "*".into(),
            tx,
            publishers: Mutex::new(HashSet::new()),
        });
        lock(&self.inner.subs).insert(topic.to_string(), sub);
        let api = lock(&self.inner.api).clone();
        let pubs = self.master(
            "registerSubscriber",
            vec![Value::str(topic), Value::str("*"), Value::str(api)],
        )?;
        self.inner.clone().connect_publishers(topic, &pubs);
        Ok(())
    }

    /// Every topic with a publisher, and its type, as the master knows them.
    pub fn published_topics(&self) -> Result<Vec<(String, String)>> {
        let v = self.master("getPublishedTopics", vec![Value::str("")])?;
        Ok(v.as_array()
            .unwrap_or_default()
            .iter()
            .filter_map(|t| match t.as_array()? {
                [a, b] => Some((a.as_str()?.to_string(), b.as_str()?.to_string())),
                _ => None,
            })
            .collect())
    }

    /// Unregisters everything from the master (also done on drop).
    pub fn close(&mut self) {
        if self.inner.shutdown.swap(true, Ordering::Relaxed) {
            return;
        }
        let api = lock(&self.inner.api).clone();
        let pubs: Vec<String> = lock(&self.inner.pubs).keys().cloned().collect();
        for t in pubs {
            let _ = self.master(
                "unregisterPublisher",
                vec![Value::str(t), Value::str(api.clone())],
            );
        }
        let subs: Vec<String> = lock(&self.inner.subs).keys().cloned().collect();
        for t in subs {
            let _ = self.master(
                "unregisterSubscriber",
                vec![Value::str(t), Value::str(api.clone())],
            );
        }
        // Subscribers' writer threads end when their queues' senders go.
        for p in lock(&self.inner.pubs).values() {
            lock(&p.links).clear();
        }
        lock(&self.inner.subs).clear();
        self.server = None;
        if let Ok(s) = TcpStream::connect_timeout(&self.tcp_addr, Duration::from_secs(1)) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.close();
    }
}

impl Inner {
    fn master(&self, method: &str, params: &mut Vec<Value>) -> Result<Value> {
        params.insert(0, Value::str(self.opts.name.clone()));
        xmlrpc::call(&self.opts.master, method, params)
            .map_err(|e| match e {
                Error::Live { reason, .. } => live_err(
                    &format!("the ROS master at {}", self.opts.master),
                    &format!("{method}: {reason}"),
                ),
                e => e,
            })?
            .ros_result(&format!("{method} at the ROS master {}", self.opts.master))
    }

    /// The node API.
    fn answer(self: &Arc<Self>, method: &str, params: &[Value]) -> Value {
        let ok = |v: Value| Value::Array(vec![Value::Int(1), Value::str(""), v]);
        match method {
            "getPid" => ok(Value::Int(std::process::id() as i32)),
            "getMasterUri" => ok(Value::str(self.opts.master.clone())),
            "shutdown" => {
                self.shutdown.store(true, Ordering::Relaxed);
                ok(Value::Int(0))
            }
            "getPublications" => ok(Value::Array(
                lock(&self.pubs)
                    .values()
                    .map(|p| {
                        Value::Array(vec![
                            Value::str(p.spec.topic.clone()),
                            Value::str(p.spec.datatype.clone()),
                        ])
                    })
                    .collect(),
            )),
            "getSubscriptions" => ok(Value::Array(
                lock(&self.subs)
                    .iter()
                    .map(|(t, s)| {
                        Value::Array(vec![Value::str(t.clone()), Value::str(s.datatype.clone())])
                    })
                    .collect(),
            )),
            "getBusStats" => ok(Value::Array(vec![
                Value::Array(vec![]),
                Value::Array(vec![]),
                Value::Array(vec![]),
            ])),
            "getBusInfo" => {
                let mut rows = Vec::new();
                for p in lock(&self.pubs).values() {
                    for l in lock(&p.links).iter() {
                        rows.push(Value::Array(vec![
                            Value::Int(l.id as i32),
                            Value::str(l.callerid.clone()),
                            Value::str("o"),
                            Value::str("TCPROS"),
                            Value::str(p.spec.topic.clone()),
                            Value::Bool(l.alive.load(Ordering::Relaxed)),
                        ]));
                    }
                }
                ok(Value::Array(rows))
            }
            "paramUpdate" => ok(Value::Int(0)),
            "publisherUpdate" => {
                if let (Some(topic), Some(pubs)) =
                    (params.get(1).and_then(Value::as_str), params.get(2))
                {
                    self.clone().connect_publishers(topic, pubs);
                }
                ok(Value::Int(0))
            }
            "requestTopic" => {
                let topic = params.get(1).and_then(Value::as_str).unwrap_or("");
                let tcpros = params.get(2).and_then(Value::as_array).is_some_and(|ps| {
                    ps.iter().any(|p| {
                        p.as_array().and_then(|p| p.first()).and_then(Value::as_str)
                            == Some("TCPROS")
                    })
                });
                if !lock(&self.pubs).contains_key(topic) {
                    Value::Array(vec![
                        Value::Int(0),
                        Value::str(format!("{} does not publish {topic}", self.opts.name)),
                        Value::Array(vec![]),
                    ])
                } else if !tcpros {
                    Value::Array(vec![
                        Value::Int(0),
                        Value::str("only TCPROS is supported"),
                        Value::Array(vec![]),
                    ])
                } else {
                    Value::Array(vec![
                        Value::Int(1),
                        Value::str("ready"),
                        Value::Array(vec![
                            Value::str("TCPROS"),
                            Value::str(self.opts.host.clone()),
                            Value::Int(i32::from(self.tcp_port)),
                        ]),
                    ])
                }
            }
            other => Value::Array(vec![
                Value::Int(-1),
                Value::str(format!("{other} is not supported")),
                Value::Int(0),
            ]),
        }
    }

    /// A subscriber connecting to one of our publications.
    fn accept(self: Arc<Self>, conn: TcpStream) {
        let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = conn.set_nodelay(true);
        let mut r = match conn.try_clone() {
            Ok(r) => r,
            Err(_) => return,
        };
        let Ok(h) = Header::read(&mut r) else { return };
        let mut w = conn;
        let refuse = |w: &mut TcpStream, why: String| {
            let _ = Header::default().with("error", &why).write(w);
        };
        let Some(topic) = h.get("topic") else {
            refuse(&mut w, "bagscope serves topics only (no services)".into());
            return;
        };
        let Some(p) = lock(&self.pubs).get(topic).cloned() else {
            refuse(
                &mut w,
                format!("{} does not publish {topic}", self.opts.name),
            );
            return;
        };
        let md5 = h.get("md5sum").unwrap_or("*");
        if md5 != "*" && p.spec.md5sum != "*" && md5 != p.spec.md5sum {
            refuse(
                &mut w,
                format!(
                    "{topic} is {} with md5sum {}, the subscriber asked for {} {md5}",
                    p.spec.datatype,
                    p.spec.md5sum,
                    h.get("type").unwrap_or("?")
                ),
            );
            return;
        }
        let reply = Header::default()
            .with("callerid", &self.opts.name)
            .with("latching", if p.spec.latching { "1" } else { "0" })
            .with("md5sum", &p.spec.md5sum)
            .with("message_definition", &p.spec.definition)
            .with("topic", topic)
            .with("type", &p.spec.datatype);
        if reply.write(&mut w).is_err() {
            return;
        }
        if h.get("probe") == Some("1") {
            return;
        }
        let (tx, rx) = mpsc::sync_channel::<Bytes>(QUEUE);
        let alive = Arc::new(AtomicBool::new(true));
        let pending = Arc::new(AtomicU64::new(0));
        let link = Link {
            callerid: h.get("callerid").unwrap_or("").to_string(),
            tx,
            alive: alive.clone(),
            pending: pending.clone(),
            id: self.next_link.fetch_add(1, Ordering::Relaxed),
        };
        {
            // The latched message first, then whatever is published after.
            let mut links = lock(&p.links);
            if let Some(last) = lock(&p.last).clone() {
                link.pending.fetch_add(1, Ordering::Relaxed);
                let _ = link.tx.try_send(last);
            }
            links.push(link);
        }
        drop(p);
        drop(self);
        write_loop(w, rx, &alive, &pending);
        alive.store(false, Ordering::Relaxed);
    }

    /// Connects to every publisher of `pubs` (XML-RPC addresses) not connected yet.
    fn connect_publishers(self: Arc<Self>, topic: &str, pubs: &Value) {
        let Some(sub) = lock(&self.subs).get(topic).cloned() else {
            return;
        };
        for uri in pubs.as_array().unwrap_or_default() {
            let Some(uri) = uri.as_str() else { continue };
            if !lock(&sub.publishers).insert(uri.to_string()) {
                continue;
            }
            let (inner, sub, topic, uri) = (
                self.clone(),
                sub.clone(),
                topic.to_string(),
                uri.to_string(),
            );
            let _ = thread::Builder::new()
                .name("bagscope-tcpros-sub".into())
                .spawn(move || {
                    let r = inner.read_publisher(&topic, &uri, &sub);
                    lock(&sub.publishers).remove(&uri);
                    if let Err(e) = r {
                        if !inner.shutdown.load(Ordering::Relaxed) {
                            eprintln!("bagscope: {topic} from {uri}: {e}");
                        }
                    }
                });
        }
    }

    /// Asks the publisher at `uri` for `topic`, connects and reads its messages until it
    /// closes or the node shuts down.
    fn read_publisher(&self, topic: &str, uri: &str, sub: &Subscription) -> Result<()> {
        let what = format!("publisher {uri} of {topic}");
        let v = xmlrpc::call(
            uri,
            "requestTopic",
            &[
                Value::str(self.opts.name.clone()),
                Value::str(topic),
                Value::Array(vec![Value::Array(vec![Value::str("TCPROS")])]),
            ],
        )?
        .ros_result(&what)?;
        let (host, port) = match v.as_array() {
            Some([p, h, port]) if p.as_str() == Some("TCPROS") => (
                h.as_str().unwrap_or("").to_string(),
                port.as_int().unwrap_or(0),
            ),
            _ => return Err(live_err(&what, "requestTopic did not offer TCPROS")),
        };
        let addr = (host.as_str(), u16::try_from(port).unwrap_or(0))
            .to_socket_addrs()
            .map_err(|e| live_err(&what, &format!("{host}:{port}: {e}")))?
            .next()
            .ok_or_else(|| live_err(&what, &format!("{host} has no address")))?;
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
            .map_err(|e| live_err(&what, &format!("cannot connect to {addr}: {e}")))?;
        let _ = s.set_nodelay(true);
        Header::default()
            .with("callerid", &self.opts.name)
            .with("md5sum", "*")
            .with("message_definition", "")
            .with("tcp_nodelay", "1")
            .with("topic", topic)
            .with("type", "*")
            .write(&mut s)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let header = Header::read(&mut s).map_err(|e| live_err(&what, &e))?;
        if let Some(e) = header.get("error") {
            return Err(live_err(&what, &format!("refused: {e}")));
        }
        // Messages may be far apart; the node's shutdown closes the socket's reads by timeout.
        s.set_read_timeout(Some(Duration::from_millis(500)))?;
        let header = Arc::new(header);
        let mut r = std::io::BufReader::with_capacity(1 << 16, s);
        loop {
            if self.shutdown.load(Ordering::Relaxed) {
                return Ok(());
            }
            match tcpros::read_frame_until(
                &mut r,
                tcpros::MAX_MESSAGE,
                "message",
                Some(&self.shutdown),
            ) {
                Ok(Some(data)) => {
                    let m = Received {
                        topic: topic.to_string(),
                        header: header.clone(),
                        time_ns: now_ns(),
                        data,
                    };
                    if sub.tx.send(m).is_err() {
                        return Ok(());
                    }
                }
                Ok(None) => return Ok(()),
                Err(e) => return Err(live_err(&what, &e)),
            }
        }
    }
}

/// Writes queued messages to a subscriber until the queue's senders are gone or the
/// subscriber goes away, flushing whenever the queue is empty.
fn write_loop(conn: TcpStream, rx: Receiver<Bytes>, alive: &AtomicBool, pending: &AtomicU64) {
    let _ = conn.set_write_timeout(None);
    let mut w = BufWriter::with_capacity(1 << 16, conn);
    // Written to the buffer, not yet flushed to the socket.
    let mut buffered = 0;
    loop {
        let m = match rx.try_recv() {
            Ok(m) => m,
            Err(mpsc::TryRecvError::Empty) => {
                if w.flush().is_err() {
                    break;
                }
                pending.fetch_sub(buffered, Ordering::Relaxed);
                buffered = 0;
                match rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                }
            }
            Err(mpsc::TryRecvError::Disconnected) => break,
        };
        if w.write_all(&(m.len() as u32).to_le_bytes())
            .and_then(|()| w.write_all(&m))
            .is_err()
        {
            break;
        }
        buffered += 1;
    }
    let _ = w.flush();
    alive.store(false, Ordering::Relaxed);
}
