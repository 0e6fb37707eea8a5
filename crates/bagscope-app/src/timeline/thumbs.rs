//! Thumbnails on the image topics' timeline rows, as rqt_bag draws them: one image per slot of
//! the row (the message at or before the slot's time), made on a worker and cached. The UI asks
//! for the set of thumbnails it is missing this frame; the worker always works on the newest set,
//! so panning and zooming never queue up decodes.

use crate::inspector::InspectKey;
use crate::job::{Requests, Service};
use bagscope_reader::Bag;
use std::collections::{HashMap, HashSet, VecDeque};

/// Most thumbnails kept as textures.
const CACHE_MAX: usize = 600;

/// Longer side of a thumbnail (pixels).
pub const THUMB_PX: u32 = 96;

type Made = (InspectKey, Option<egui::ColorImage>);

/// The thumbnails of an open recording.
#[derive(Default)]
pub struct Thumbs {
    cache: HashMap<InspectKey, Option<egui::TextureHandle>>,
    order: VecDeque<InspectKey>,
    asked: HashSet<InspectKey>,
    /// The worker, started with the first request.
    worker: Option<Service<Vec<InspectKey>, Made>>,
    /// Width over height of the images per topic, once one is seen.
    pub aspect: HashMap<usize, f32>,
}

/// Thumbnails taken into textures per frame at most.
const PER_FRAME: usize = 6;

fn spawn(bag: Bag, ctx: &egui::Context) -> Result<Service<Vec<InspectKey>, Made>, String> {
    Service::spawn(
        "thumbnails",
        2,
        64,
        ctx,
        move |reqs: Requests<Vec<InspectKey>>, h| {
            let mut want: Vec<InspectKey> = Vec::new();
            // Video topics' thumbnails are their keyframes, decoded alone.
            let mut videos = crate::images::video::Videos::budgeted(64 << 20);
            loop {
                if want.is_empty() {
                    match reqs.recv() {
                        Some(w) => want = w,
                        None => return,
                    }
                }
                // A newer set replaces the one being worked on.
                while let Some(w) = reqs.try_recv() {
                    want = w;
                }
                let key = want.remove(0);
                let img = match videos.keyframe(&bag, key) {
                    Some(v) => v,
                    None => crate::inspector::decode_image(&bag, key),
                };
                let img = img.ok().map(|i| {
                    let (w, h, px) = i.thumbnail(THUMB_PX);
                    egui::ColorImage::from_rgba_unmultiplied([w as usize, h as usize], &px)
                });
                if !h.send((key, img)) {
                    return;
                }
            }
        },
    )
}

impl Thumbs {
    /// Takes the thumbnails the worker made (never blocks); `topic_of` maps a connection to
    /// its topic, for the aspect ratio.
    pub fn poll(&mut self, ctx: &egui::Context, topic_of: impl Fn(usize) -> Option<usize>) {
        let Some(w) = &mut self.worker else { return };
        w.flush();
        // A few a frame: each is a texture upload on this thread, and the worker can make
        // dozens a frame when images are read alone from an uncompressed chunk.
        for _ in 0..PER_FRAME {
            let Some((key, img)) = w.take() else { break };
            self.asked.remove(&key);
            let tex = img.map(|c| {
                if let Some(t) = topic_of(key.conn) {
                    let [w, h] = c.size;
                    self.aspect.insert(t, w as f32 / h.max(1) as f32);
                }
                ctx.load_texture("thumb", c, egui::TextureOptions::LINEAR)
            });
            self.cache.insert(key, tex);
            self.order.push_back(key);
            while self.order.len() > CACHE_MAX {
                if let Some(old) = self.order.pop_front() {
                    self.cache.remove(&old);
                }
            }
        }
    }

    /// How many thumbnails are made and kept (decoded or not).
    pub fn made(&self) -> usize {
        self.cache.values().filter(|t| t.is_some()).count()
    }

    /// The thumbnail of a message if made (`Some(None)`: it could not be decoded).
    pub fn get(&self, key: &InspectKey) -> Option<Option<&egui::TextureHandle>> {
        self.cache.get(key).map(|t| t.as_ref())
    }

    /// Drops the worker (it reads a recording replaced by a newer state of it); the thumbnails
    /// made stay, and those asked for are asked again of the next worker.
    pub fn forget_worker(&mut self) {
        self.worker = None;
        self.asked.clear();
    }

    /// Asks for the thumbnails in `missing` (those on screen without one), nearest first.
    pub fn request(&mut self, bag: &Bag, ctx: &egui::Context, missing: Vec<InspectKey>) {
        let fresh: Vec<InspectKey> = missing
            .into_iter()
            .filter(|k| !self.cache.contains_key(k))
            .collect();
        if fresh.is_empty() || fresh.iter().all(|k| self.asked.contains(k)) {
            return;
        }
        if self.worker.is_none() {
            // Without a thread there are no thumbnails: the rows draw their density instead.
            self.worker = spawn(bag.clone(), ctx).ok();
        }
        if let Some(w) = &mut self.worker {
            // The set replaces any set still waiting; the worker skips to the newest.
            w.ask(fresh.clone(), |_, _| true);
            self.asked = fresh.into_iter().collect();
        }
    }
}
