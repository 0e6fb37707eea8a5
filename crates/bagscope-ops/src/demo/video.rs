//! The demo's video camera: the front camera's view (160×120) at 10 Hz as H.264 (`foxglove_msgs/
//! CompressedVideo`, ROS 1), encoded by the pure-Rust `rusty_h264` encoder with a keyframe
//! every 2 s, one access unit a message.

use bagscope_reader::error::{Error, Result};
use rusty_h264_common::YuvFrame;
use rusty_h264_encoder::{Encoder, EncoderConfig};

use super::render::{render_front, FRONT_H, FRONT_W};
use super::{Pose, Ser};

/// The front camera's size.
const W: u32 = FRONT_W;
const H: u32 = FRONT_H;

pub(super) struct Camera {
    enc: Encoder,
}

impl Camera {
    pub(super) fn new() -> Result<Camera> {
        let mut cfg = EncoderConfig::new(W as usize, H as usize);
        // A keyframe every 20 frames exactly, each frame out as it goes in (no lookahead, no
        // frames held for a macroblock tree), one reference.
        cfg.gop_size = 20;
        cfg.min_keyint = 20;
        cfg.scenecut = 0;
        cfg.lookahead = 0;
        cfg.mbtree = false;
        cfg.num_ref_frames = 1;
        cfg.framerate = 10.0;
        let enc = Encoder::new(cfg).map_err(|e| Error::Invalid(format!("demo video: {e:?}")))?;
        Ok(Camera { enc })
    }

    /// The message of the frame stamped `t` at pose `p`.
    pub(super) fn frame(&mut self, s: &mut Ser, t: u64, p: &Pose) -> Result<()> {
        let rgb = render_front(p, W, H);
        let au = self.enc.encode(&to_i420(&rgb, W as usize, H as usize));
        s.u32((t / 1_000_000_000) as u32)
            .u32((t % 1_000_000_000) as u32)
            .str("camera_front")
            .u32(au.len() as u32);
        s.0.extend_from_slice(&au);
        s.str("h264");
        Ok(())
    }
}

/// RGB to Y'CbCr 4:2:0, BT.601 limited range (chroma from each 2×2 block's mean).
fn to_i420(rgb: &[u8], w: usize, h: usize) -> YuvFrame {
    let mut f = YuvFrame::black(w, h);
    let px = |x: usize, y: usize| {
        let i = (y * w + x) * 3;
        (
            f64::from(rgb[i]),
            f64::from(rgb[i + 1]),
            f64::from(rgb[i + 2]),
        )
    };
    for y in 0..h {
        for x in 0..w {
            let (r, g, b) = px(x, y);
            f.y[y * w + x] = (16.0 + 0.257 * r + 0.504 * g + 0.098 * b).round() as u8;
        }
    }
    for cy in 0..h / 2 {
        for cx in 0..w / 2 {
            let (mut r, mut g, mut b) = (0.0, 0.0, 0.0);
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let (pr, pg, pb) = px(2 * cx + dx, 2 * cy + dy);
                r += pr / 4.0;
                g += pg / 4.0;
                b += pb / 4.0;
            }
            f.u[cy * w / 2 + cx] = (128.0 - 0.148 * r - 0.291 * g + 0.439 * b).round() as u8;
            f.v[cy * w / 2 + cx] = (128.0 + 0.439 * r - 0.368 * g - 0.071 * b).round() as u8;
        }
    }
    f
}
