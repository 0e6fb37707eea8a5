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
    /// The tag of the access unit it came from (the packet's place in its topic).
    pub tag: i64,
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
        let k = Coeffs {
            y0,
            c0,
            yk,
            rv,
            bu,
            gu,
            gv,
        };
        match &self.planes {
            Planes::U8(p) => k.convert(self.width, self.height, self.chroma, p),
            Planes::U16(p) => k.convert(self.width, self.height, self.chroma, p),
        }
    }
}

/// The conversion's fixed-point coefficients.
struct Coeffs {
    y0: i64,
    c0: i64,
    yk: i64,
    rv: i64,
    bu: i64,
    gu: i64,
    gv: i64,
}

impl Coeffs {
    fn convert<T: Copy + Into<i64>>(
        &self,
        w: usize,
        h: usize,
        (cw, ch): (usize, usize),
        planes: &[Vec<T>; 3],
    ) -> Vec<u8> {
        let sx = if cw == 0 { 1 } else { w.div_ceil(cw) };
        let sy = if ch == 0 { 1 } else { h.div_ceil(ch) };
        let mut out = vec![0u8; w * h * 4];
        let clamp = |v: i64| ((v + 32768) >> 16).clamp(0, 255) as u8;
        let (yp, up, vp) = (&planes[0], &planes[1], &planes[2]);
        if w == 0 || yp.len() < w * h {
            return out;
        }
        for (row, line) in out.chunks_exact_mut(w * 4).enumerate() {
            let ys = &yp[row * w..(row + 1) * w];
            let c0 = (row / sy).min(ch.saturating_sub(1)) * cw;
            let (us, vs) = match (up.get(c0..c0 + cw), vp.get(c0..c0 + cw)) {
                (Some(u), Some(v)) if cw > 0 => (u, v),
                // No chroma (monochrome): grey.
                _ => {
                    for (px, &y) in line.chunks_exact_mut(4).zip(ys) {
                        let g = clamp((y.into() - self.y0) * self.yk);
                        px.copy_from_slice(&[g, g, g, 255]);
                    }
                    continue;
                }
            };
            for (x, (px, &y)) in line.chunks_exact_mut(4).zip(ys).enumerate() {
                let yv = (y.into() - self.y0) * self.yk;
                let ci = (x / sx).min(cw - 1);
                let u = us[ci].into() - self.c0;
                let v = vs[ci].into() - self.c0;
                px[0] = clamp(yv + self.rv * v);
                px[1] = clamp(yv + self.gu * u + self.gv * v);
                px[2] = clamp(yv + self.bu * u);
                px[3] = 255;
            }
        }
        out
    }
}
