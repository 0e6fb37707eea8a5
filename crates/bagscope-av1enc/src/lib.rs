//! Pictures into AV1 (royalty-free), for bagscope's cameras that are not video (raw, JPEG, PNG)
//! where a video is wanted (the LeRobot export): RGB made 8-bit 4:2:0 YUV as BT.601 limited
//! range (what ffmpeg's `rgb24` → `yuv420p` gives, and what the stream says it is), encoded by
//! rav1e at its fastest preset with a keyframe at least every `fps * 2` frames.
//!
//! A crate of its own so that rav1e's code, generic over the pixel type, is made concrete
//! (`Context<u8>`) here, where the workspace's test profile optimises it: made concrete in
//! `bagscope-ops` (unoptimised in tests), ten 320×240 frames took 23 s.

use rav1e::color::{
    ChromaSamplePosition, ChromaSampling, ColorDescription, ColorPrimaries, MatrixCoefficients,
    PixelRange, TransferCharacteristics,
};
use rav1e::config::{EncoderConfig, SpeedSettings};
use rav1e::prelude::FrameType;
use rav1e::{Config, Context, EncoderStatus};

/// An AV1 temporal unit (one shown frame) as rav1e wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Av1Unit {
    /// The OBUs.
    pub data: Vec<u8>,
    /// Whether it starts with a keyframe.
    pub key: bool,
}

/// Encodes RGB pictures of one size into AV1.
pub struct Av1Encoder {
    ctx: Context<u8>,
    width: usize,
    height: usize,
    units: Vec<Av1Unit>,
}

impl std::fmt::Debug for Av1Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Av1Encoder({}x{})", self.width, self.height)
    }
}

fn status(e: EncoderStatus) -> String {
    format!("AV1 encoder: {e}")
}

impl Av1Encoder {
    /// An encoder of `width` × `height` pictures at `fps`, on `threads` threads; `quantizer`
    /// 0 (best) to 255 (rav1e's scale; 100 is its default).
    pub fn new(
        width: usize,
        height: usize,
        fps: u32,
        threads: usize,
        quantizer: usize,
    ) -> Result<Self, String> {
        if !(16..=16384).contains(&width) || !(16..=16384).contains(&height) {
            return Err(format!(
                "AV1 encoder: a {width}x{height} picture (16 to 16384 pixels a side)"
            ));
        }
        let enc = EncoderConfig {
            width,
            height,
            time_base: rav1e::data::Rational::new(1, u64::from(fps.max(1))),
            bit_depth: 8,
            chroma_sampling: ChromaSampling::Cs420,
            chroma_sample_position: ChromaSamplePosition::Unknown,
            pixel_range: PixelRange::Limited,
            color_description: Some(ColorDescription {
                color_primaries: ColorPrimaries::BT601,
                transfer_characteristics: TransferCharacteristics::BT601,
                matrix_coefficients: MatrixCoefficients::BT601,
            }),
            min_key_frame_interval: 0,
            max_key_frame_interval: u64::from(fps.max(1)) * 2,
            quantizer: quantizer.min(255),
            speed_settings: SpeedSettings::from_preset(10),
            // No frames held back to be shown later: each picture's unit comes out in order,
            // and the encoder does less.
            low_latency: true,
            // Tiles are what rav1e encodes in parallel.
            tiles: threads.max(1) * 2,
            ..Default::default()
        };
        let ctx = Config::new()
            .with_encoder_config(enc)
            .with_threads(threads)
            .new_context()
            .map_err(|e| format!("AV1 encoder: {e}"))?;
        Ok(Av1Encoder {
            ctx,
            width,
            height,
            units: Vec::new(),
        })
    }

    /// Adds a picture: `rgb` is `width * height * 3` bytes, row by row.
    pub fn push(&mut self, rgb: &[u8]) -> Result<(), String> {
        let (w, h) = (self.width, self.height);
        if rgb.len() != w * h * 3 {
            return Err(format!(
                "AV1 encoder: {} bytes for a {w}x{h} RGB picture ({} expected)",
                rgb.len(),
                w * h * 3
            ));
        }
        let (y, u, v) = rgb_to_yuv420(rgb, w, h);
        let mut f = self.ctx.new_frame();
        let cw = w.div_ceil(2);
        f.planes[0].copy_from_raw_u8(&y, w, 1);
        f.planes[1].copy_from_raw_u8(&u, cw, 1);
        f.planes[2].copy_from_raw_u8(&v, cw, 1);
        self.ctx.send_frame(f).map_err(status)?;
        self.drain()
    }

    fn drain(&mut self) -> Result<(), String> {
        loop {
            match self.ctx.receive_packet() {
                Ok(p) => self.units.push(Av1Unit {
                    key: p.frame_type == FrameType::KEY,
                    data: p.data,
                }),
                Err(EncoderStatus::Encoded) => {}
                Err(EncoderStatus::NeedMoreData | EncoderStatus::LimitReached) => return Ok(()),
                Err(e) => return Err(status(e)),
            }
        }
    }

    /// Every picture's temporal unit, in order.
    pub fn finish(mut self) -> Result<Vec<Av1Unit>, String> {
        self.ctx.flush();
        self.drain()?;
        Ok(self.units)
    }
}

/// RGB (3 bytes a pixel) as BT.601 limited-range 4:2:0 planes (chroma averaged over each 2×2
/// block, the last row and column repeated for odd sizes).
pub fn rgb_to_yuv420(rgb: &[u8], w: usize, h: usize) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let mut y = vec![0u8; w * h];
    let mut u = vec![0u8; cw * ch];
    let mut v = vec![0u8; cw * ch];
    let px = |x: usize, yy: usize| {
        let i = (yy.min(h - 1) * w + x.min(w - 1)) * 3;
        (
            f32::from(rgb[i]),
            f32::from(rgb[i + 1]),
            f32::from(rgb[i + 2]),
        )
    };
    let clamp = |x: f32| x.round().clamp(0.0, 255.0) as u8;
    for yy in 0..h {
        for x in 0..w {
            let (r, g, b) = px(x, yy);
            y[yy * w + x] = clamp(16.0 + 0.256_789 * r + 0.504_129 * g + 0.097_906 * b);
        }
    }
    for cy in 0..ch {
        for cx in 0..cw {
            let (mut r, mut g, mut b) = (0.0, 0.0, 0.0);
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let p = px(cx * 2 + dx, cy * 2 + dy);
                r += p.0 / 4.0;
                g += p.1 / 4.0;
                b += p.2 / 4.0;
            }
            u[cy * cw + cx] = clamp(128.0 - 0.148_223 * r - 0.290_992 * g + 0.439_215 * b);
            v[cy * cw + cx] = clamp(128.0 + 0.439_215 * r - 0.367_789 * g - 0.071_426 * b);
        }
    }
    (y, u, v)
}
