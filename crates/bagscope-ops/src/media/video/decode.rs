//! The decoders behind one trait, so that one can be swapped for another: pure-Rust
//! `rusty_h264` and `rusty_h265`, chosen because they decode x264 and x265 streams (B-frames,
//! 10 bits) to the same samples as ffmpeg's libavcodec (the video tests check every frame), and
//! rav1d for AV1 ([`super::av1`]).

use super::nal::SeqInfo;
use super::yuv::{Planes, Yuv};
use super::{Codec, Colour};

/// A decoder of one codec: access units in, pictures out in display order.
pub trait FrameDecoder: Send {
    /// Decodes one access unit (Annex B), adding to `out` the pictures now due for display;
    /// each picture carries the `tag` of the unit it was decoded from.
    fn push(&mut self, au: &[u8], tag: i64, out: &mut Vec<Yuv>) -> Result<(), String>;
    /// Ends the stream: every picture still held goes to `out`.
    fn flush(&mut self, out: &mut Vec<Yuv>);
    /// From now on only the picture of `tag` comes out with its samples; the others come out
    /// in their place as [`Yuv::hollow`]. A seek needs its target's samples alone, and where a
    /// decoder's pictures are its own (H.265: a 1080p picture's copy costs about a tenth of its
    /// decoding) the copies of the pictures it only refers to are saved. Decoders whose
    /// pictures are handed over without a copy give them all.
    fn samples_only_for(&mut self, _tag: i64) {}
}

/// A fresh decoder for `codec`, for a stream whose sequence parameter set says `seq`.
pub fn decoder_for(codec: Codec, seq: SeqInfo) -> Box<dyn FrameDecoder> {
    match codec {
        Codec::H264 => Box::new(H264 {
            dec: rusty_h264_decoder::Decoder::new(),
            held: Vec::new(),
            colour: seq.colour,
            // Not said: every picture of a group may wait (16 is the most a DPB holds).
            reorder: seq.reorder.map_or(16, |r| r.min(16) as usize),
        }),
        Codec::H265 => Box::new(H265 {
            dec: rusty_h265::Decoder::new(),
            colour: seq.colour,
            only: None,
        }),
        Codec::Av1 => Box::new(super::av1::Av1::new()),
    }
}

/// H.264: `rusty_h264` gives pictures in decoding order with their picture order count.
/// They wait as a decoder's picture buffer holds them for output (C.4.5.3's "bumping"): while
/// more than `max_num_reorder_frames` wait, the one of the lowest count is shown; an IDR
/// (which restarts the count) or the end shows every one still waiting.
struct H264 {
    dec: rusty_h264_decoder::Decoder,
    held: Vec<(i32, Yuv)>,
    colour: Colour,
    reorder: usize,
}

impl H264 {
    fn release(&mut self, out: &mut Vec<Yuv>) {
        self.held.sort_by_key(|h| h.0);
        out.extend(self.held.drain(..).map(|h| h.1));
    }
}

impl FrameDecoder for H264 {
    fn push(&mut self, au: &[u8], tag: i64, out: &mut Vec<Yuv>) -> Result<(), String> {
        if rusty_h264_decoder::au_is_idr(au) {
            self.release(out);
        }
        // One message may hold several access units (and a decoder takes one at a time).
        for unit in rusty_h264_decoder::split_access_units(au) {
            if let Some(f) = self.dec.decode(unit).map_err(|e| e.to_string())? {
                let chroma = (f.width.div_ceil(2), f.height.div_ceil(2));
                let yuv = Yuv {
                    width: f.width,
                    height: f.height,
                    chroma,
                    bit_depth: 8,
                    planes: Planes::U8([f.y, f.u, f.v]),
                    colour: self.colour,
                    tag,
                };
                self.held.push((self.dec.last_poc(), yuv));
                while self.held.len() > self.reorder {
                    let (i, _) = self
                        .held
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, h)| h.0)
                        .unwrap_or((0, &self.held[0]));
                    out.push(self.held.remove(i).1);
                }
            }
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut Vec<Yuv>) {
        self.release(out);
    }
}

/// H.265: `rusty_h265` bumps its own picture buffer, so pictures come out in output order.
struct H265 {
    dec: rusty_h265::Decoder,
    colour: Colour,
    /// The one tag whose picture is copied out, if [`FrameDecoder::samples_only_for`] said.
    only: Option<i64>,
}

impl H265 {
    fn drain(&mut self, out: &mut Vec<Yuv>) {
        while let Ok(f) = self.dec.next_frame() {
            out.push(match self.only {
                Some(t) if f.pts != Some(t) => Yuv::hollow(f.pts.unwrap_or(-1), self.colour),
                _ => h265_picture(&f, self.colour),
            });
        }
    }
}

impl FrameDecoder for H265 {
    fn push(&mut self, au: &[u8], tag: i64, out: &mut Vec<Yuv>) -> Result<(), String> {
        let r = self
            .dec
            .push_annexb(au, Some(tag))
            .map_err(|e| e.to_string());
        self.drain(out);
        r
    }

    fn flush(&mut self, out: &mut Vec<Yuv>) {
        self.dec.flush();
        self.drain(out);
    }

    fn samples_only_for(&mut self, tag: i64) {
        self.only = Some(tag);
    }
}

/// A decoded H.265 picture cropped to its conformance window, 8-bit samples narrowed.
fn h265_picture(f: &rusty_h265::Frame, colour: Colour) -> Yuv {
    let p = &f.picture;
    let (cx, cy, cw, ch) = p.crop;
    let (sx, sy) = match p.chroma_format_idc {
        1 => (2, 2),
        2 => (2, 1),
        _ => (1, 1),
    };
    let mono = p.chroma_format_idc == 0;
    let rect = |i: usize| -> (usize, usize, usize, usize) {
        if i == 0 {
            (cx, cy, cw, ch)
        } else if mono {
            (0, 0, 0, 0)
        } else {
            (cx / sx, cy / sy, cw.div_ceil(sx), ch.div_ceil(sy))
        }
    };
    let wide = p.bit_depth_luma > 8 || p.bit_depth_chroma > 8;
    // One pass a plane, straight into the samples kept (8-bit ones narrowed): a 1080p
    // picture's copy is about a tenth of its decoding time (`perf record` of a seek).
    fn cut<T>(
        plane: &rusty_h265::Plane,
        (x0, y0, w, h): (usize, usize, usize, usize),
        push: fn(&mut Vec<T>, &[u16]),
    ) -> Vec<T> {
        let mut v = Vec::with_capacity(w * h);
        for y in y0..(y0 + h).min(plane.height) {
            let row = plane.row(y);
            let end = (x0 + w).min(row.len());
            push(&mut v, &row[x0.min(end)..end]);
        }
        v
    }
    let planes = if wide {
        Planes::U16(std::array::from_fn(|i| {
            cut(&p.planes[i], rect(i), Vec::extend_from_slice)
        }))
    } else {
        Planes::U8(std::array::from_fn(|i| {
            cut(&p.planes[i], rect(i), |v, row| {
                v.extend(row.iter().map(|&s| s as u8))
            })
        }))
    };
    let (_, _, chroma_w, chroma_h) = rect(1);
    Yuv {
        width: cw,
        height: ch,
        chroma: (chroma_w, chroma_h),
        bit_depth: p.bit_depth_luma,
        planes,
        colour,
        tag: f.pts.unwrap_or(-1),
    }
}
