//! The inspector's worker, and the reading of a message into an image the image panels'
//! workers share.

use std::sync::Arc;

use crate::job::{Requests, Service};
use bagscope_reader::encoding::{Node, Plan};
use bagscope_reader::{Bag, IndexEntry};

/// Reads and decodes a message into an image (the image panels' and the thumbnails' workers).
pub fn decode_image(
    bag: &Bag,
    key: InspectKey,
) -> Result<bagscope_ops::media::image::Image, String> {
    let (plan, _) = bag.plan(key.conn).map_err(|e| e.to_string())?;
    let m = bag
        .message(key.conn, key.entry)
        .map_err(|e| e.to_string())?;
    bagscope_ops::media::image::decode_message(&plan, &m.data).map_err(|e| e.to_string())
}

/// A message to show in the inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InspectKey {
    /// Connection index.
    pub conn: usize,
    /// Where it is.
    pub entry: IndexEntry,
}

/// A message read and decoded for the inspector.
pub struct Inspected {
    /// What was asked.
    pub key: InspectKey,
    /// Its bytes.
    pub data: Result<bagscope_reader::Bytes, String>,
    /// Its decoded tree, with the plan that decoded it.
    pub decoded: Result<(Arc<Plan>, Node), String>,
}

/// The inspector's worker: reads and decodes the message asked for on a named thread; only
/// the latest request matters, so older ones waiting in the queue are skipped.
pub fn inspector(bag: Bag, ctx: &egui::Context) -> Result<Service<InspectKey, Inspected>, String> {
    Service::spawn(
        "inspector",
        4,
        4,
        ctx,
        move |reqs: Requests<InspectKey>, h| {
            let plans: Vec<Result<Arc<Plan>, String>> = (0..bag.summary().connections.len())
                .map(|ci| bag.plan(ci).map(|(p, _)| p).map_err(|e| e.to_string()))
                .collect();
            while let Some(key) = reqs.latest() {
                // Detached from its chunk: the UI thread keeps the result and drops it.
                let data = bag.message(key.conn, key.entry).map(|m| m.data.detach());
                let decoded = match (&data, plans.get(key.conn)) {
                    (Ok(d), Some(Ok(p))) => p
                        .decode(d)
                        .map(|n| (Arc::clone(p), n))
                        .map_err(|e| e.to_string()),
                    (Err(e), _) => Err(e.to_string()),
                    (_, Some(Err(e))) => Err(e.clone()),
                    (_, None) => Err("no such connection".into()),
                };
                let out = Inspected {
                    key,
                    data: data.map_err(|e| e.to_string()),
                    decoded,
                };
                if !h.send(out) {
                    return;
                }
            }
        },
    )
}
