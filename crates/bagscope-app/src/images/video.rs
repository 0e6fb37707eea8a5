//! Video topics in image panels (`foxglove.CompressedVideo`, `FFMPEGPacket`, Annex B
//! `CompressedImage`): the image worker builds a topic's keyframe table the first time a panel
//! shows it, then decodes the frame at the playhead with the topic's [`Video`], which keeps
//! its decoder between requests (playing forward decodes each packet once) and a cache of
//! frames around the playhead. While no panel asks, the worker decodes a few frames ahead.

use std::collections::HashMap;
use std::sync::Arc;

use bagscope_ops::media::image::{Image, Pixels};
use bagscope_ops::media::video::{
    is_video_type, packet_of, Shown, Video, VideoIndex, DEFAULT_BUDGET,
};
use bagscope_reader::Bag;

use crate::inspector::InspectKey;

/// Frames decoded ahead of the one shown, while the worker is idle.
const AHEAD: usize = 12;

enum Slot {
    /// Images, not video.
    NotVideo,
    /// The keyframe table could not be made.
    Failed(String),
    /// Decoding; the last frame shown.
    Ready(Box<Video>, usize),
}

/// The video topics a worker has met.
pub struct Videos {
    topics: HashMap<String, Slot>,
    budget: usize,
}

impl Default for Videos {
    fn default() -> Self {
        Videos::budgeted(DEFAULT_BUDGET)
    }
}

impl Videos {
    /// Each topic's decoded frames kept within `budget` bytes.
    pub fn budgeted(budget: usize) -> Videos {
        Videos {
            topics: HashMap::new(),
            budget,
        }
    }

    /// The topic of `key`'s connection, classified the first time it is met.
    fn slot(&mut self, bag: &Bag, key: InspectKey) -> Option<&mut Slot> {
        let summary = bag.summary();
        let conn = summary.connections.get(key.conn)?;
        if !self.topics.contains_key(&conn.topic) {
            let slot = classify(bag, key, &conn.topic, &conn.datatype, self.budget);
            self.topics.insert(conn.topic.clone(), slot);
        }
        self.topics.get_mut(&conn.topic)
    }

    /// The image to show for `key` if its topic is video (`None`: it is not).
    pub fn image(&mut self, bag: &Bag, key: InspectKey) -> Option<Result<Image, String>> {
        let slot = self.slot(bag, key)?;
        let (video, last) = match slot {
            Slot::NotVideo => return None,
            Slot::Failed(e) => return Some(Err(e.clone())),
            Slot::Ready(v, last) => (v, last),
        };
        let ix = Arc::clone(&video.index);
        // The frame shown at this message's time (the N-th frame from the N-th message on).
        let n = ix.frame_at(key.entry.time_ns).unwrap_or(0);
        *last = n;
        Some(match video.frame(bag, n) {
            Shown::Frame(f) => Ok(Image {
                width: f.width as u32,
                height: f.height as u32,
                encoding: format!(
                    "{} · frame {} of {} · {}{}",
                    ix.codec,
                    n + 1,
                    ix.frames.len(),
                    f.colour.matrix_name(),
                    if f.bit_depth > 8 {
                        format!(" · {}-bit shown 8-bit", f.bit_depth)
                    } else {
                        String::new()
                    }
                ),
                pixels: Pixels::Rgba(f.to_rgba()),
                map: None,
            }),
            Shown::Waiting => Err(format!(
                "waiting for a keyframe (the first is frame {} of {})",
                ix.keys.first().map_or(0, |&k| k + 1),
                ix.frames.len()
            )),
            Shown::Lost(why) => Err(why),
        })
    }

    /// A thumbnail's image for `key` if its topic is video: the keyframe at or before it,
    /// decoded alone (`None`: not video).
    pub fn keyframe(&mut self, bag: &Bag, key: InspectKey) -> Option<Result<Image, String>> {
        let slot = self.slot(bag, key)?;
        let video = match slot {
            Slot::NotVideo => return None,
            Slot::Failed(e) => return Some(Err(e.clone())),
            Slot::Ready(v, _) => v,
        };
        let n = video.index.frame_at(key.entry.time_ns).unwrap_or(0);
        Some(match video.keyframe(bag, n) {
            Shown::Frame(f) => Ok(Image {
                width: f.width as u32,
                height: f.height as u32,
                encoding: video.index.codec.to_string(),
                pixels: Pixels::Rgba(f.to_rgba()),
                map: None,
            }),
            Shown::Waiting => Err("before the first keyframe".into()),
            Shown::Lost(why) => Err(why),
        })
    }

    /// Decodes one frame ahead of what a panel shows; says whether there was work.
    pub fn prefetch(&mut self, bag: &Bag) -> bool {
        self.topics.values_mut().any(|s| match s {
            Slot::Ready(v, last) => v.prefetch(bag, *last, AHEAD),
            _ => false,
        })
    }
}

/// Whether a topic is video (by its type, or a `CompressedImage` whose bytes are Annex B),
/// and if so its keyframe table.
fn classify(bag: &Bag, key: InspectKey, topic: &str, datatype: &str, budget: usize) -> Slot {
    let video = is_video_type(datatype)
        || (datatype.rsplit('/').next() == Some("CompressedImage")
            && bag.plan(key.conn).ok().is_some_and(|(plan, _)| {
                bag.message(key.conn, key.entry)
                    .ok()
                    .and_then(|m| plan.decode(&m.data).ok())
                    .and_then(|n| packet_of(&plan.def, &n))
                    .is_some()
            }));
    if !video {
        return Slot::NotVideo;
    }
    match VideoIndex::build(bag, topic, None) {
        Ok(ix) => Slot::Ready(Box::new(Video::new(Arc::new(ix), budget)), 0),
        Err(e) => Slot::Failed(e.to_string()),
    }
}
