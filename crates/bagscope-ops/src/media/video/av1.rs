//! AV1 through `re_rav1d`, the Rust port of dav1d (BSD-2-Clause) with its safe, dav1d-rs-like
//! API, built without its assembly (no nasm needed): the same pictures as dav1d, sample for
//! sample (the video tests hold every frame against ffmpeg's libdav1d). One thread and a frame
//! delay of one, so that a temporal unit in is its picture out, as the index expects.

use re_rav1d::{Decoder, Error, PixelLayout, PlanarImageComponent, Settings};

use super::decode::FrameDecoder;
use super::yuv::{Planes, Yuv};
use super::Colour;

/// An AV1 decoder (`Err`: why it could not be made, said at the first packet).
pub struct Av1 {
    dec: Result<Decoder, String>,
}

impl Av1 {
    pub fn new() -> Av1 {
        let mut s = Settings::new();
        s.set_n_threads(1);
        s.set_max_frame_delay(1);
        Av1 {
            dec: Decoder::with_settings(&s).map_err(|e| format!("no AV1 decoder: {e}")),
        }
    }
}

fn say(e: Error) -> String {
    format!("AV1: {e}")
}

impl Av1 {
    fn drain(dec: &mut Decoder, out: &mut Vec<Yuv>) -> Result<(), String> {
        loop {
            match dec.get_picture() {
                Ok(p) => out.push(picture(&p)?),
                Err(e) if e.is_again() => return Ok(()),
                Err(e) => return Err(say(e)),
            }
        }
    }
}

impl FrameDecoder for Av1 {
    fn push(&mut self, au: &[u8], tag: i64, out: &mut Vec<Yuv>) -> Result<(), String> {
        let dec = self.dec.as_mut().map_err(|e| e.clone())?;
        let mut sent = dec.send_data(au.to_vec(), None, Some(tag), None);
        // The decoder takes what it can; the rest waits until its pictures are taken.
        loop {
            match sent {
                Ok(()) => break,
                Err(e) if e.is_again() => {
                    Self::drain(dec, out)?;
                    sent = dec.send_pending_data();
                }
                Err(e) => return Err(say(e)),
            }
        }
        Self::drain(dec, out)
    }

    fn flush(&mut self, out: &mut Vec<Yuv>) {
        if let Ok(dec) = self.dec.as_mut() {
            let _ = Self::drain(dec, out);
        }
    }
}

/// A decoded picture's planes, rows cut from their strides; above 8 bits as 16-bit samples.
fn picture(p: &re_rav1d::Picture) -> Result<Yuv, String> {
    let (w, h) = (p.width() as usize, p.height() as usize);
    let (cw, ch) = match p.pixel_layout() {
        PixelLayout::I400 => (0, 0),
        PixelLayout::I420 => (w.div_ceil(2), h.div_ceil(2)),
        PixelLayout::I422 => (w.div_ceil(2), h),
        PixelLayout::I444 => (w, h),
    };
    let depth = p.bit_depth();
    let wide = depth > 8;
    let bytes = if wide { 2 } else { 1 };
    let plane = |c: PlanarImageComponent, (pw, ph): (usize, usize)| -> Result<Vec<u8>, String> {
        if pw == 0 {
            return Ok(Vec::new());
        }
        let stride = p.stride(c) as usize;
        let data = p.plane(c);
        let mut v = Vec::with_capacity(pw * ph * bytes);
        for y in 0..ph {
            let row = data
                .get(y * stride..y * stride + pw * bytes)
                .ok_or("AV1: a picture's plane is shorter than its size")?;
            v.extend_from_slice(row);
        }
        Ok(v)
    };
    let raw = [
        plane(PlanarImageComponent::Y, (w, h))?,
        plane(PlanarImageComponent::U, (cw, ch))?,
        plane(PlanarImageComponent::V, (cw, ch))?,
    ];
    let planes = if wide {
        let wide = |b: &Vec<u8>| {
            b.chunks_exact(2)
                .map(|x| u16::from_le_bytes([x[0], x[1]]))
                .collect::<Vec<u16>>()
        };
        Planes::U16([wide(&raw[0]), wide(&raw[1]), wide(&raw[2])])
    } else {
        let [y, u, v] = raw;
        Planes::U8([y, u, v])
    };
    Ok(Yuv {
        width: w,
        height: h,
        chroma: (cw, ch),
        bit_depth: depth as u8,
        planes,
        colour: Colour {
            matrix: p.matrix_coefficients() as u8,
            full_range: matches!(p.color_range(), re_rav1d::pixel::YUVRange::Full),
        },
        tag: p.timestamp().unwrap_or(-1),
    })
}
