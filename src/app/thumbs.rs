//! Thumbnails on the image topics' timeline rows, as rqt_bag draws them: one image per slot of
//! the row (the message at or before the slot's time), made on a worker and cached. The UI asks
//! for the set of thumbnails it is missing this frame; the worker always works on the newest set,
//! so panning and zooming never queue up decodes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

use super::worker::InspectKey;
use crate::Bag;

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
    tx: Option<SyncSender<Vec<InspectKey>>>,
    rx: Option<Receiver<Made>>,
    /// Width over height of the images per topic, once one is seen.
    pub aspect: HashMap<usize, f32>,
}

/// Thumbnails taken into textures per frame at most.
const PER_FRAME: usize = 6;

fn spawn(bag: Bag, ctx: egui::Context) -> (SyncSender<Vec<InspectKey>>, Receiver<Made>) {
    let (tx, req) = sync_channel::<Vec<InspectKey>>(2);
    let (res_tx, rx) = sync_channel::<Made>(64);
    let _ = std::thread::Builder::new()
        .name("bagscope-thumbnails".into())
        .spawn(move || {
            let mut want: Vec<InspectKey> = Vec::new();
            loop {
                if want.is_empty() {
                    match req.recv() {
                        Ok(w) => want = w,
                        Err(_) => return,
                    }
                }
                // A newer set replaces the one being worked on.
                while let Ok(w) = req.try_recv() {
                    want = w;
                }
                let key = want.remove(0);
                let img = super::images::decode_at(&bag, key).ok().map(|i| {
                    let (w, h, px) = i.thumbnail(THUMB_PX);
                    egui::ColorImage::from_rgba_unmultiplied([w as usize, h as usize], &px)
                });
                if res_tx.send((key, img)).is_err() {
                    return;
                }
                ctx.request_repaint();
            }
        });
    (tx, rx)
}

impl Thumbs {
    /// Takes the thumbnails the worker made (never blocks); `topic_of` maps a connection to
    /// its topic, for the aspect ratio.
    pub fn poll(&mut self, ctx: &egui::Context, topic_of: impl Fn(usize) -> Option<usize>) {
        let Some(rx) = &self.rx else { return };
        // A few a frame: each is a texture upload on this thread, and the worker can make
        // dozens a frame when images are read alone from an uncompressed chunk.
        for _ in 0..PER_FRAME {
            let Ok((key, img)) = rx.try_recv() else { break };
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

    /// Asks for the thumbnails in `missing` (those on screen without one), nearest first.
    pub fn request(&mut self, bag: &Bag, ctx: &egui::Context, missing: Vec<InspectKey>) {
        let fresh: Vec<InspectKey> = missing
            .into_iter()
            .filter(|k| !self.cache.contains_key(k))
            .collect();
        if fresh.is_empty() || fresh.iter().all(|k| self.asked.contains(k)) {
            return;
        }
        if self.tx.is_none() {
            let (tx, rx) = spawn(bag.clone(), ctx.clone());
            self.tx = Some(tx);
            self.rx = Some(rx);
        }
        if let Some(tx) = &self.tx {
            match tx.try_send(fresh.clone()) {
                Ok(()) => self.asked = fresh.into_iter().collect(),
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
            }
        }
    }
}
