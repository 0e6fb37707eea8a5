//! A camera that is not video (`sensor_msgs/Image`, `CompressedImage` with JPEG or PNG,
//! Foxglove's `RawImage` and `CompressedImage`) into the dataset's MP4: the frames picked on
//! the clock decoded and encoded as AV1 ([`crate::media::video::encode`]), each shown at its
//! tick. Colour and mono pictures; depth pictures are refused (said, not guessed at).

use std::path::Path;

use bagscope_reader::bag::Bag;
use bagscope_reader::error::{Error, Result};
use bagscope_reader::Filter;

use crate::media::image::{decode_message, Orientation, Pixels};
use crate::media::video::encode::Av1Encoder;
use crate::media::video::mp4::{write_mp4_av1, Mp4Written};

/// The quantizer of the AV1 encode (rav1e's scale, 0 best to 255; 100 its default): near
/// what LeRobot's own `encode_video_frames` asks of SVT-AV1 (`crf 30`).
const QUANTIZER: usize = 120;

/// Handed each picture as it is encoded: its tick, RGBA pixels, width and height.
pub(super) type SeePicture<'a> = dyn FnMut(usize, &[u8], usize, usize) + 'a;

/// An image topic's messages over an episode.
#[derive(Debug, Clone)]
pub(super) struct Images {
    pub(super) topic: String,
    conns: Vec<usize>,
    range: (u64, u64),
    /// Each message's receive time (ns), in order.
    pub(super) times: Vec<u64>,
}

impl Images {
    /// The messages of `topic` within `[a, b]`.
    pub(super) fn list(bag: &Bag, topic: &str, (a, b): (u64, u64)) -> Result<Images> {
        let conns = bag.connections_of_topics(&[topic])?;
        let mut times = Vec::new();
        for m in bag.messages(&Filter {
            connections: Some(conns.clone()),
            start_ns: Some(a),
            end_ns: Some(b.saturating_add(1)),
        })? {
            times.push(m?.time_ns);
        }
        Ok(Images {
            topic: topic.to_string(),
            conns,
            range: (a, b),
            times,
        })
    }

    /// Encodes `picked[k]` (an index into `times`, in order) shown at `shown[k]` into an AV1
    /// MP4 at `path`; `see(k, rgba, width, height)` is handed each picture as it is encoded.
    pub(super) fn encode(
        &self,
        bag: &Bag,
        (picked, shown): (&[usize], &[u64]),
        fps: u32,
        threads: usize,
        path: &Path,
        see: &mut SeePicture<'_>,
    ) -> Result<Mp4Written> {
        let err = |t: u64, e: String| Error::Invalid(format!("{} at {t} ns: {e}", self.topic));
        let (a, b) = self.range;
        let mut enc: Option<(Av1Encoder, (usize, usize))> = None;
        let mut next = 0;
        let last = picked.last().copied().unwrap_or(0);
        for (i, m) in bag
            .messages(&Filter {
                connections: Some(self.conns.clone()),
                start_ns: Some(a),
                end_ns: Some(b.saturating_add(1)),
            })?
            .enumerate()
        {
            if i > last || next >= picked.len() {
                break;
            }
            if picked[next] != i {
                continue;
            }
            let m = m?;
            let (plan, _) = bag.plan(m.conn)?;
            let img = decode_message(&plan, &m.data).map_err(|e| err(m.time_ns, e.to_string()))?;
            if !matches!(img.pixels, Pixels::Rgba(_) | Pixels::Mono8(_)) {
                return Err(err(
                    m.time_ns,
                    format!(
                        "a {} picture: depth and other single-channel pictures of more than 8 bits \
                         are not encoded into a video (colour and mono8 are)",
                        img.encoding
                    ),
                ));
            }
            let (w, h, rgba) = img.render(Default::default(), (0.0, 255.0), Orientation::default());
            let (w, h) = (w as usize, h as usize);
            let rgb: Vec<u8> = rgba
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect();
            let (e, size) = match &mut enc {
                Some(x) => x,
                None => {
                    let e = Av1Encoder::new(w, h, fps, threads, QUANTIZER)
                        .map_err(|e| err(m.time_ns, e))?;
                    enc.insert((e, (w, h)))
                }
            };
            if *size != (w, h) {
                return Err(err(
                    m.time_ns,
                    format!(
                        "a {w}x{h} picture in a camera of {}x{} pictures",
                        size.0, size.1
                    ),
                ));
            }
            // The same picture on every tick it is nearest to.
            while next < picked.len() && picked[next] == i {
                see(next, &rgba, w, h);
                e.push(&rgb).map_err(|e| err(m.time_ns, e))?;
                next += 1;
            }
        }
        let Some((e, size)) = enc else {
            return Err(Error::Invalid(format!(
                "{}: no picture to encode",
                self.topic
            )));
        };
        if next != picked.len() {
            return Err(Error::Invalid(format!(
                "{}: {} of {} pictures read",
                self.topic,
                next,
                picked.len()
            )));
        }
        let units = e
            .finish()
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.topic)))?;
        let header = crate::media::video::encode::sequence_header(&units).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: the AV1 encoder wrote no sequence header",
                self.topic
            ))
        })?;
        write_mp4_av1(&units, &header, size, shown, path)
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.topic)))
    }
}
