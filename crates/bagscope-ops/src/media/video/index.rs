//! The keyframe table of a video topic and the frames decoded from it.
//!
//! Frame N (display order) is shown from the time of the topic's N-th picture-carrying
//! message (decoding order) on. To show frame N, the group of pictures it belongs to is
//! decoded from its keyframe up to the next keyframe, on the caller's thread (a worker's);
//! an H.265 CRA's RASL pictures, which refer to the group before, are decoded from the
//! keyframe before it. The decoded frames stay in a cache of a bounded size, the frames
//! farthest from the last one asked leaving first.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bagscope_reader::encoding::Plan;
use bagscope_reader::{Bag, Filter, IndexEntry};

use super::nal::{self, Kind, SeqInfo};
use super::poc::{Order, PocReader};
use super::{decoder_for, packet_of, Codec, FrameDecoder, Packet, VideoError, Yuv};

mod sparse;

/// The cache's default size: half a gigabyte of decoded pictures (170 at 1080p).
pub const DEFAULT_BUDGET: usize = 512 << 20;

/// Where one packet is, and what its headers say.
#[derive(Debug, Clone, Copy)]
pub struct PacketRef {
    /// Its connection.
    pub conn: usize,
    /// Where it is stored.
    pub entry: IndexEntry,
    /// Its receive time (ns).
    pub time_ns: u64,
    /// Its NAL unit types.
    pub kind: Kind,
    /// The display order of the picture it holds, read from its slice header (`None`: no
    /// picture, several, or one whose order is not read: its group is decoded whole).
    pub order: Option<Order>,
}

/// A video topic's packets and keyframes, read from the first bytes of every message.
#[derive(Debug, Clone)]
pub struct VideoIndex {
    /// The topic.
    pub topic: String,
    /// Its codec.
    pub codec: Codec,
    /// Its colour description and reordering (from the first sequence parameter set).
    pub seq: SeqInfo,
    /// What its messages call their format.
    pub format: String,
    /// Every packet, in decoding (recorded) order.
    pub packets: Vec<PacketRef>,
    /// Frame N's packet (the packets holding a picture).
    pub frames: Vec<u32>,
    /// The frame numbers of the keyframes.
    pub keys: Vec<u32>,
    /// Parameter sets sent before a keyframe that lacks them (keyed by frame number).
    pub(super) params: HashMap<u32, Arc<Vec<u8>>>,
    /// Messages of the topic that held no video packet.
    pub not_video: u64,
    /// The pictures a picture refers to, as counts relative to its own (keyed by
    /// packet): a seek decodes only these, followed from the frame asked back.
    pub(super) uses: HashMap<u32, Box<[i32]>>,
}

impl VideoIndex {
    /// Reads every message of `topic` (its headers only are kept). `cancel` stops it.
    pub fn build(
        bag: &Bag,
        topic: &str,
        cancel: Option<&AtomicBool>,
    ) -> Result<VideoIndex, VideoError> {
        let err = |reason: String| VideoError {
            topic: topic.to_string(),
            time_ns: None,
            codec: None,
            reason,
        };
        let conns = bag
            .connections_of_topics(&[topic])
            .map_err(|e| err(e.to_string()))?;
        let mut reader = PacketReader::default();
        let mut pocs = PocReader::default();
        let mut ix = VideoIndex {
            topic: topic.to_string(),
            codec: Codec::H264,
            seq: SeqInfo::default(),
            format: String::new(),
            packets: Vec::new(),
            frames: Vec::new(),
            keys: Vec::new(),
            params: HashMap::new(),
            not_video: 0,
            uses: HashMap::new(),
        };
        let mut codec = None;
        let mut seq = None;
        let mut last_params: Option<Arc<Vec<u8>>> = None;
        let messages = bag
            .messages(&Filter {
                connections: Some(conns),
                ..Default::default()
            })
            .map_err(|e| err(e.to_string()))?;
        for m in messages {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(err("cancelled".into()));
            }
            let m = m.map_err(|e| err(e.to_string()))?;
            let Some(pkt) = reader.packet(bag, m.conn, &m.data).map_err(err)? else {
                ix.not_video += 1;
                continue;
            };
            if codec.is_none() {
                codec = pkt.codec;
                ix.format = pkt.format.clone();
            }
            let kind = match codec {
                Some(c) => nal::kind(c, &pkt.data),
                // Before the codec is known: a picture no decoding can start at.
                None => Kind {
                    picture: true,
                    ..Kind::default()
                },
            };
            if let Some(c) = codec {
                let ps = parameter_sets(c, &pkt.data);
                if !ps.is_empty() {
                    if seq.is_none() {
                        seq = nal::seq_info(c, &pkt.data);
                    }
                    last_params = Some(Arc::new(ps));
                } else if kind.key {
                    if let Some(p) = &last_params {
                        ix.params.insert(ix.frames.len() as u32, Arc::clone(p));
                    }
                }
            }
            let (order, uses) = codec.map_or((None, None), |c| pocs.packet(c, &pkt.data));
            if let (Some(u), true) = (uses, kind.picture) {
                ix.uses
                    .insert(ix.packets.len() as u32, u.into_boxed_slice());
            }
            if kind.picture {
                if kind.key {
                    ix.keys.push(ix.frames.len() as u32);
                }
                ix.frames.push(ix.packets.len() as u32);
            }
            ix.packets.push(PacketRef {
                conn: m.conn,
                entry: m.entry,
                time_ns: m.time_ns,
                kind,
                order: order.filter(|_| kind.picture),
            });
        }
        ix.codec = codec.ok_or_else(|| {
            err(if ix.packets.is_empty() {
                format!("no video packet in {} messages", ix.not_video)
            } else if !ix.format.is_empty() {
                format!(
                    "its packets are {:?}, which bagscope does not decode (h264, h265)",
                    ix.format
                )
            } else {
                "no packet names its codec or carries parameter sets (h264, h265)".into()
            })
        })?;
        ix.seq = seq.unwrap_or_default();
        Ok(ix)
    }

    /// The frame shown at time `t_ns`: the last whose packet came at or before it.
    pub fn frame_at(&self, t_ns: u64) -> Option<usize> {
        let n = self
            .frames
            .partition_point(|&p| self.packets[p as usize].time_ns <= t_ns);
        n.checked_sub(1)
    }

    /// The time frame `n` is shown from.
    pub fn time_of(&self, n: usize) -> Option<u64> {
        let p = *self.frames.get(n)?;
        Some(self.packets[p as usize].time_ns)
    }

    /// The keyframe (its place in [`VideoIndex::keys`]) at or before frame `n`.
    pub(super) fn key_before(&self, n: usize) -> Option<usize> {
        self.keys
            .partition_point(|&k| k as usize <= n)
            .checked_sub(1)
    }

    /// The RASL pictures right after keyframe frame `k`: shown before it, decodable only from
    /// the keyframe before.
    pub(super) fn rasl_after(&self, k: usize) -> usize {
        let key = &self.packets[self.frames[k] as usize].kind;
        if key.closed {
            return 0;
        }
        self.frames[k + 1..]
            .iter()
            .take_while(|&&p| self.packets[p as usize].kind.rasl)
            .count()
    }
}

/// The parameter-set NAL units of a packet, as Annex B.
fn parameter_sets(codec: Codec, data: &[u8]) -> Vec<u8> {
    if codec == Codec::Av1 {
        return super::obu::sequence_header(data).map_or_else(Vec::new, <[u8]>::to_vec);
    }
    let mut out = Vec::new();
    for u in nal::units(data) {
        let ps = match codec {
            Codec::H264 => u.first().is_some_and(|b| matches!(b & 0x1F, 7 | 8)),
            Codec::H265 => u.first().is_some_and(|b| matches!(b >> 1, 32..=34)),
            Codec::Av1 => false,
        };
        if ps {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(u);
        }
    }
    out
}

/// A keyframe's packet with the parameter sets it lacks: before it (Annex B), or after its
/// temporal delimiter (AV1's sequence header).
pub(super) fn with_params(codec: Codec, ps: &[u8], data: &[u8]) -> Vec<u8> {
    match codec {
        Codec::Av1 => super::obu::with_sequence_header(ps, data),
        Codec::H264 | Codec::H265 => [ps, data].concat(),
    }
}

/// Reads packets out of their messages, each connection's plan made once.
#[derive(Default)]
pub struct PacketReader {
    plans: HashMap<usize, Arc<Plan>>,
}

impl PacketReader {
    /// Connection `conn`'s plan.
    fn plan(&mut self, bag: &Bag, conn: usize) -> Result<Arc<Plan>, String> {
        if let Some(p) = self.plans.get(&conn) {
            return Ok(Arc::clone(p));
        }
        let (p, _) = bag.plan(conn).map_err(|e| e.to_string())?;
        self.plans.insert(conn, Arc::clone(&p));
        Ok(p)
    }

    /// The packet of a message's bytes (`None`: not video).
    pub(crate) fn packet(
        &mut self,
        bag: &Bag,
        conn: usize,
        data: &[u8],
    ) -> Result<Option<Packet>, String> {
        let plan = self.plan(bag, conn)?;
        Ok(plan
            .decode(data)
            .ok()
            .and_then(|n| packet_of(&plan.def, &n)))
    }

    /// The packet `pr` points at, read from the recording.
    pub fn read(&mut self, bag: &Bag, pr: &PacketRef) -> Result<Packet, String> {
        let plan = self.plan(bag, pr.conn)?;
        let m = bag.message(pr.conn, pr.entry).map_err(|e| e.to_string())?;
        let node = plan.decode(&m.data).map_err(|e| e.to_string())?;
        packet_of(&plan.def, &node).ok_or_else(|| "the message holds no video packet".into())
    }
}

/// What is shown for a frame.
#[derive(Debug, Clone)]
pub enum Shown {
    /// The picture.
    Frame(Arc<Yuv>),
    /// Before the first keyframe (or an undecodable leading picture of it): nothing yet.
    Waiting,
    /// The frame could not be decoded; why.
    Lost(String),
}

/// A decoder part way through a topic: the next packet it takes and the frame its next
/// picture is.
struct Live {
    dec: Box<dyn FrameDecoder>,
    next_packet: usize,
    next_frame: usize,
}

/// A video topic's frames, decoded on demand around the last one asked.
///
/// One decoder is kept between calls: asking for the frames in order (playing forward)
/// decodes each packet once; asking for a frame it cannot reach without passing a keyframe
/// it could start from, or one behind it, starts a fresh decoder at that keyframe.
pub struct Video {
    /// The keyframe table.
    pub index: Arc<VideoIndex>,
    cache: BTreeMap<usize, Arc<Yuv>>,
    lost: BTreeMap<usize, String>,
    bytes: usize,
    budget: usize,
    reader: PacketReader,
    live: Option<Live>,
    /// Pictures decoded so far.
    pub decoded: u64,
    /// Frames dropped from the cache to keep within its budget.
    pub evicted: u64,
    /// The decoding errors met, each once.
    pub errors: Vec<VideoError>,
}

impl Video {
    /// Frames of `index`, with a cache of at most `budget` bytes (the frames nearest the one
    /// asked are kept).
    pub fn new(index: Arc<VideoIndex>, budget: usize) -> Video {
        Video {
            index,
            cache: BTreeMap::new(),
            lost: BTreeMap::new(),
            bytes: 0,
            budget,
            reader: PacketReader::default(),
            live: None,
            decoded: 0,
            evicted: 0,
            errors: Vec::new(),
        }
    }

    /// Frame `n` if it is decoded already.
    pub fn cached(&self, n: usize) -> Option<Shown> {
        if let Some(f) = self.cache.get(&n) {
            return Some(Shown::Frame(Arc::clone(f)));
        }
        self.lost.get(&n).map(|e| Shown::Lost(e.clone()))
    }

    /// The keyframe (place in `keys`) decoding must start from to show frame `n`: the one
    /// at or before it, or the one before that for an H.265 RASL picture.
    fn start_for(&self, n: usize) -> Option<usize> {
        let ki = self.index.key_before(n)?;
        let k = self.index.keys[ki] as usize;
        if n < k + self.index.rasl_after(k) {
            ki.checked_sub(1)
        } else {
            Some(ki)
        }
    }

    /// Frame `n`, decoded (from its keyframe, or on from the decoder already part way) if it
    /// is not in the cache.
    pub fn frame(&mut self, bag: &Bag, n: usize) -> Shown {
        if let Some(s) = self.cached(n) {
            return s;
        }
        if n >= self.index.frames.len() {
            return Shown::Lost(format!(
                "{} has {} frames, no #{n}",
                self.index.topic,
                self.index.frames.len()
            ));
        }
        // A failure restarts at the next keyframe: at most one try a keyframe.
        for _ in 0..=self.index.keys.len() {
            let Some(ki) = self.start_for(n) else {
                return Shown::Waiting;
            };
            let key_packet = self.index.frames[self.index.keys[ki] as usize] as usize;
            let reusable = self
                .live
                .as_ref()
                .is_some_and(|l| l.next_frame <= n && l.next_packet >= key_packet);
            if !reusable {
                let k = self.index.keys[ki] as usize;
                // A seek decodes only what frame n refers to (when its group's order is
                // read). A decoder is then ready at the keyframe for what follows: the
                // worker's idle time (`prefetch`) or the next frame asked takes it through
                // the whole group.
                let shown = self.sparse(bag, n, ki);
                self.live = Some(Live {
                    dec: decoder_for(self.index.codec, self.index.seq),
                    next_packet: key_packet,
                    next_frame: k + self.index.rasl_after(k),
                });
                if shown {
                    if let Some(s) = self.cached(n) {
                        return s;
                    }
                }
            }
            self.decode_to(bag, n);
            if let Some(s) = self.cached(n) {
                return s;
            }
        }
        Shown::Waiting
    }

    /// The keyframe at or before frame `n`, decoded alone (for thumbnails: no decoder is kept
    /// and the live one is left as it is).
    pub fn keyframe(&mut self, bag: &Bag, n: usize) -> Shown {
        let ix = Arc::clone(&self.index);
        let Some(ki) = ix.key_before(n) else {
            return Shown::Waiting;
        };
        let k = ix.keys[ki] as usize;
        // The keyframe's own picture shows after its RASL pictures.
        let at = k + ix.rasl_after(k);
        if let Some(s) = self.cached(at) {
            return s;
        }
        let pr = ix.packets[ix.frames[k] as usize];
        let mut data = match self.reader.read(bag, &pr) {
            Ok(p) => p.data,
            Err(e) => return Shown::Lost(self.fail(pr.time_ns, e)),
        };
        if let Some(ps) = ix.params.get(&(k as u32)) {
            data = with_params(ix.codec, ps, &data);
        }
        let mut dec = decoder_for(ix.codec, ix.seq);
        let mut out = Vec::new();
        if let Err(e) = dec.push(&data, k as i64, &mut out) {
            return Shown::Lost(self.fail(pr.time_ns, format!("decoding failed: {e}")));
        }
        dec.flush(&mut out);
        match out.pop() {
            Some(f) => {
                let f = Arc::new(f);
                self.insert(at, Arc::clone(&f), n);
                Shown::Frame(f)
            }
            None => Shown::Lost("the decoder gave no picture for the keyframe".into()),
        }
    }

    /// Decodes one frame ahead of frame `n` (at most `ahead` frames past it) with the decoder
    /// already there, so that playing forward finds the frames ready. Says whether it decoded
    /// anything; called again and again while a worker is idle. After a seek that decoded
    /// only what frame `n` refers to, these calls take the decoder waiting at its keyframe
    /// through the group, a picture at a time, up to the frames ahead.
    pub fn prefetch(&mut self, bag: &Bag, n: usize, ahead: usize) -> bool {
        let Some(live) = &self.live else {
            return false;
        };
        let target = live.next_frame;
        if target > n + ahead || target >= self.index.frames.len() {
            return false;
        }
        self.decode_to(bag, target);
        true
    }

    /// Feeds the live decoder until frame `n` has come out (or is lost, or the stream ends).
    fn decode_to(&mut self, bag: &Bag, n: usize) {
        let ix = Arc::clone(&self.index);
        let Some(mut live) = self.live.take() else {
            return;
        };
        let mut out = Vec::new();
        while live.next_frame <= n {
            let p = live.next_packet;
            let Some(pr) = ix.packets.get(p) else {
                // The end: every picture still held comes out.
                live.dec.flush(&mut out);
                self.take(&mut live, &mut out, n);
                self.lose(live.next_frame, ix.frames.len(), || {
                    "the decoder gave no picture for it".into()
                });
                return;
            };
            let frame = ix.frames.partition_point(|&q| (q as usize) < p);
            let starts_group = pr.kind.key && ix.frames.get(frame) == Some(&(p as u32));
            if starts_group && pr.kind.closed {
                // Nothing after an IDR refers to what came before: every earlier picture is
                // out now, and the count starts again here.
                live.dec.flush(&mut out);
                self.take(&mut live, &mut out, n);
                if live.next_frame < frame {
                    self.lose(live.next_frame, frame, || {
                        "the decoder gave no picture for it".into()
                    });
                }
                live.next_frame = frame;
            }
            let mut data = match self.reader.read(bag, pr) {
                Ok(pkt) => pkt.data,
                Err(e) => {
                    let why = self.fail(pr.time_ns, e);
                    self.broken(&mut live, p, why);
                    return;
                }
            };
            if pr.kind.key {
                if let Some(ps) = ix.params.get(&(frame as u32)) {
                    data = with_params(ix.codec, ps, &data);
                }
            }
            live.next_packet += 1;
            if let Err(e) = live.dec.push(&data, p as i64, &mut out) {
                let why = self.fail(pr.time_ns, format!("decoding failed: {e}"));
                live.dec.flush(&mut out);
                self.take(&mut live, &mut out, n);
                self.broken(&mut live, p, why);
                return;
            }
            self.take(&mut live, &mut out, n);
        }
        self.live = Some(live);
    }

    /// Files the pictures a decoder gave as the next frames.
    fn take(&mut self, live: &mut Live, out: &mut Vec<Yuv>, centre: usize) {
        self.decoded += out.len() as u64;
        for yuv in out.drain(..) {
            if live.next_frame < self.index.frames.len() {
                self.insert(live.next_frame, Arc::new(yuv), centre);
            }
            live.next_frame += 1;
        }
    }

    /// After a failure at packet `p`: the frames from the live decoder's next up to the next
    /// keyframe (and its RASL pictures) are lost; the decoder is dropped.
    fn broken(&mut self, live: &mut Live, p: usize, why: String) {
        let ix = Arc::clone(&self.index);
        let frame = ix.frames.partition_point(|&q| (q as usize) <= p);
        let stop = match ix
            .keys
            .get(ix.keys.partition_point(|&k| (k as usize) < frame.max(1)))
        {
            Some(&k) => k as usize + ix.rasl_after(k as usize),
            None => ix.frames.len(),
        };
        self.lose(live.next_frame, stop, || why.clone());
        self.live = None;
    }

    fn lose(&mut self, from: usize, to: usize, why: impl Fn() -> String) {
        for n in from..to {
            if !self.cache.contains_key(&n) {
                self.lost.insert(n, why());
            }
        }
    }

    /// Notes a decoding error once; returns what the lost frames say.
    fn fail(&mut self, time_ns: u64, reason: String) -> String {
        let e = VideoError {
            topic: self.index.topic.clone(),
            time_ns: Some(time_ns),
            codec: Some(self.index.codec),
            reason,
        };
        let text = e.to_string();
        if self.errors.len() < 100 {
            self.errors.push(e);
        }
        format!("{text} (lost until the next keyframe)")
    }

    fn insert(&mut self, n: usize, f: Arc<Yuv>, centre: usize) {
        self.bytes += f.bytes();
        if let Some(old) = self.cache.insert(n, f) {
            self.bytes -= old.bytes();
        }
        while self.bytes > self.budget && self.cache.len() > 1 {
            let lo = *self.cache.keys().next().unwrap_or(&0);
            let hi = *self.cache.keys().next_back().unwrap_or(&0);
            let far = if centre.abs_diff(lo) > centre.abs_diff(hi) {
                lo
            } else {
                hi
            };
            if let Some(old) = self.cache.remove(&far) {
                self.bytes -= old.bytes();
                self.evicted += 1;
            }
        }
    }
}
