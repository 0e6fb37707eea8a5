//! A camera that is not video (`sensor_msgs/Image`, `CompressedImage` with JPEG or PNG,
//! Foxglove's `RawImage` and `CompressedImage`) into the dataset's MP4: the frames picked on
//! the clock decoded and encoded as AV1 ([`crate::media::video::encode`]), each shown at its
//! tick. Colour and mono pictures as they are; depth pictures (`16UC1` in mm, `32FC1` in m,
//! `compressedDepth` too) as grey over the mapping's `depth_range` (near black, far white, no
//! return black); `mono16` grey over its whole range.

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
    /// Depth pictures are drawn over `depth_range` (m); whether they were depth comes back.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn encode(
        &self,
        bag: &Bag,
        (picked, shown): (&[usize], &[u64]),
        fps: u32,
        threads: usize,
        depth_range: (f64, f64),
        path: &Path,
        see: &mut SeePicture<'_>,
    ) -> Result<(Mp4Written, bool)> {
        let err = |t: u64, e: String| Error::Invalid(format!("{} at {t} ns: {e}", self.topic));
        let (a, b) = self.range;
        let mut enc: Option<(Av1Encoder, (usize, usize))> = None;
        let mut depth = false;
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
            let range = grey_range(&img.pixels, &img.encoding, depth_range)
                .map_err(|e| err(m.time_ns, e))?;
            depth |= range.1;
            let (w, h, rgba) = img.render(Default::default(), range.0, Orientation::default());
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
        let w = write_mp4_av1(&units, &header, size, shown, path)
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.topic)))?;
        Ok((w, depth))
    }
}

/// The values a single-channel picture's black and white stand for, and whether it is depth:
/// `16UC1` (mm) and `32FC1` (m) over `depth_range` (m), `mono16` over its whole range, 8-bit
/// pictures as they are. Signed 16-bit pictures are refused (said, not guessed at).
fn grey_range(
    pixels: &Pixels,
    encoding: &str,
    (near, far): (f64, f64),
) -> std::result::Result<((f32, f32), bool), String> {
    match pixels {
        Pixels::Rgba(_) | Pixels::Mono8(_) => Ok(((0.0, 255.0), false)),
        Pixels::U16(_) if encoding.starts_with("mono16") => Ok(((0.0, 65535.0), false)),
        Pixels::U16(_) => Ok((((near * 1e3) as f32, (far * 1e3) as f32), true)),
        Pixels::F32(_) => Ok(((near as f32, far as f32), true)),
        _ => Err(format!(
            "a {encoding} picture: signed 16-bit pictures and maps are not encoded into a video \
             (colour, mono8, mono16 and depth are)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_grey_over_the_range_in_its_unit() {
        let r = (0.5, 4.0);
        assert_eq!(
            grey_range(&Pixels::U16(vec![]), "16UC1", r),
            Ok(((500.0, 4000.0), true))
        );
        assert_eq!(
            grey_range(&Pixels::U16(vec![]), "16UC1; compressedDepth png", r),
            Ok(((500.0, 4000.0), true))
        );
        assert_eq!(
            grey_range(&Pixels::F32(vec![]), "32FC1", r),
            Ok(((0.5, 4.0), true))
        );
        assert_eq!(
            grey_range(&Pixels::U16(vec![]), "mono16", r),
            Ok(((0.0, 65535.0), false))
        );
        assert!(grey_range(&Pixels::I16(vec![]), "16SC1", r)
            .unwrap_err()
            .contains("16SC1"));
    }
}
