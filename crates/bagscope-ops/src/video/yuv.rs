//! Decoded pictures as their planes, and their conversion to RGB by the stream's own colour
//! description (BT.601, BT.709 or BT.2020; limited or full range), as ffmpeg converts them:
//! each chroma sample covers its block of luma samples.

use super::Colour;

/// The samples of a picture's three planes (Y, Cb, Cr), cropped to its display size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planes {
    /// 8 bits a sample.
    U8([Vec<u8>; 3]),
    /// 9 to 16 bits a sample (Main 10).
    U16([Vec<u16>; 3]),
}

/// A decoded picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Yuv {
    /// Luma width.
    pub width: usize,
    /// Luma height.
    pub height: usize,
    /// Chroma width and height.
    pub chroma: (usize, usize),
    /// Bits a sample.
    pub bit_depth: u8,
    /// The planes.
    pub planes: Planes,
    /// How to read them as RGB.
    pub colour: Colour,
}

impl Yuv {
    /// Bytes it holds.
    pub fn bytes(&self) -> usize {
        let n = self.width * self.height + 2 * self.chroma.0 * self.chroma.1;
        match self.planes {
            Planes::U8(_) => n,
            Planes::U16(_) => 2 * n,
        }
    }

    /// The planes as ffmpeg's rawvideo writes them (`yuv420p`, or `yuv420p10le` above 8 bits):
    /// what the tests hash against ffmpeg's decode.
    pub fn raw(&self) -> Vec<u8> {
        match &self.planes {
            Planes::U8(p) => p.concat(),
            Planes::U16(p) => p.iter().flatten().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// The picture as RGBA, 8 bits a channel.
    pub fn to_rgba(&self) -> Vec<u8> {
        let (kr, kb) = match self.colour.matrix {
            1 => (0.2126, 0.0722),
            9 | 10 => (0.2627, 0.0593),
            _ => (0.299, 0.114),
        };
        let kg = 1.0 - kr - kb;
        let depth = i32::from(self.bit_depth.clamp(8, 16));
        let scale = f64::from(1u32 << (depth - 8));
        let (y0, ys, cs) = if self.colour.full_range {
            (0.0, 255.0 * scale, 255.0 * scale)
        } else {
            (16.0 * scale, 219.0 * scale, 224.0 * scale)
        };
        let c0 = 128.0 * scale;
        // R = y·(Y - y0) + rv·(Cr - c0), and so on, in 16.16 fixed point to 8-bit output.
        let fix = |v: f64| (v * 65536.0 * 255.0).round() as i64;
        let yk = fix(1.0 / ys);
        let rv = fix(2.0 * (1.0 - kr) / cs);
        let bu = fix(2.0 * (1.0 - kb) / cs);
        let gu = fix(-2.0 * (1.0 - kb) * kb / kg / cs);
        let gv = fix(-2.0 * (1.0 - kr) * kr / kg / cs);
        let (y0, c0) = (y0 as i64, c0 as i64);
        let (w, h) = (self.width, self.height);
        let (cw, ch) = self.chroma;
        let sx = if cw == 0 { 1 } else { w.div_ceil(cw) };
        let sy = if ch == 0 { 1 } else { h.div_ceil(ch) };
        let mut out = vec![0u8; w * h * 4];
        let get = |p: usize, i: usize| -> i64 {
            match &self.planes {
                Planes::U8(pl) => pl[p].get(i).map_or(0, |&v| i64::from(v)),
                Planes::U16(pl) => pl[p].get(i).map_or(0, |&v| i64::from(v)),
            }
        };
        let clamp = |v: i64| ((v + 32768) >> 16).clamp(0, 255) as u8;
        for (row, line) in out.chunks_exact_mut(w * 4).enumerate() {
            let crow = (row / sy).min(ch.saturating_sub(1)) * cw;
            for (x, px) in line.chunks_exact_mut(4).enumerate() {
                let yv = (get(0, row * w + x) - y0) * yk;
                let ci = crow + (x / sx).min(cw.saturating_sub(1));
                let (u, v) = (get(1, ci) - c0, get(2, ci) - c0);
                px[0] = clamp(yv + rv * v);
                px[1] = clamp(yv + gu * u + gv * v);
                px[2] = clamp(yv + bu * u);
                px[3] = 255;
            }
        }
        out
    }
}
