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
    /// A picture given by its tag alone, its samples not copied out of the decoder (what
    /// [`super::FrameDecoder::samples_only_for`] asks for): no size, no planes.
    pub fn hollow(tag: i64, colour: Colour) -> Yuv {
        Yuv {
            width: 0,
            height: 0,
            chroma: (0, 0),
            bit_depth: 8,
            planes: Planes::U8([Vec::new(), Vec::new(), Vec::new()]),
            colour,
            tag,
        }
    }

    /// Whether it is [`Yuv::hollow`].
    pub fn is_hollow(&self) -> bool {
        self.width == 0 && self.height == 0
    }

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
            Planes::U16(p) => {
                // Two bytes at a time into a buffer made once: the tests hash every frame
                // they decode, and an iterator of arrays flattened was most of a debug
                // build's time on a 10-bit stream.
                let mut out = vec![0; 2 * p.iter().map(Vec::len).sum::<usize>()];
                let mut rest = out.as_mut_slice();
                for plane in p {
                    let (this, next) = rest.split_at_mut(2 * plane.len());
                    for (o, v) in this.chunks_exact_mut(2).zip(plane) {
                        o.copy_from_slice(&v.to_le_bytes());
                    }
                    rest = next;
                }
                out
            }
        }
    }

    /// The picture as RGBA, 8 bits a channel.
    pub fn to_rgba(&self) -> Vec<u8> {
        let k = self.coeffs();
        match &self.planes {
            Planes::U8(p) => k.convert(self.width, self.height, self.chroma, p),
            Planes::U16(p) => k.convert(self.width, self.height, self.chroma, p),
        }
    }

    /// The conversion's coefficients for this picture's depth and colour description.
    fn coeffs(&self) -> Coeffs {
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
        Coeffs {
            y0,
            c0,
            yk,
            rv,
            bu,
            gu,
            gv,
        }
    }
}

/// The conversion's fixed-point coefficients (16.16, scaled to 8-bit output). Every product
/// and sum fits an `i32`: a sample is at most 16 bits and each coefficient is scaled down by
/// the same power of two it is scaled up by (`yk` ≤ 76,309 for 8 bits; the sums stay under
/// 2^26).
struct Coeffs {
    y0: i64,
    c0: i64,
    yk: i64,
    rv: i64,
    bu: i64,
    gu: i64,
    gv: i64,
}

/// Rows converted on one thread at most: a 1080p picture is split over two cores, a small one
/// is not split.
const ROWS_A_THREAD_MIN: usize = 64;

impl Coeffs {
    fn convert<T: Copy + Into<i64> + Sync>(
        &self,
        w: usize,
        h: usize,
        (cw, ch): (usize, usize),
        planes: &[Vec<T>; 3],
    ) -> Vec<u8> {
        let mut out = vec![0u8; w * h * 4];
        if w == 0 || planes[0].len() < w * h {
            return out;
        }
        // The picture's rows split over the cores (a seek's last step, with the other core
        // idle; each thread converts whole rows, so the result is the same however split).
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 4)
            .min(h.div_ceil(ROWS_A_THREAD_MIN));
        if threads <= 1 {
            self.rows(w, (cw, ch), h, planes, 0, &mut out);
            return out;
        }
        let per = h.div_ceil(threads);
        std::thread::scope(|sc| {
            for (k, part) in out.chunks_mut(per * w * 4).enumerate() {
                sc.spawn(move || self.rows(w, (cw, ch), h, planes, k * per, part));
            }
        });
        out
    }

    /// Rows `first..` of the picture into `out` (whole RGBA rows).
    fn rows<T: Copy + Into<i64>>(
        &self,
        w: usize,
        (cw, ch): (usize, usize),
        h: usize,
        planes: &[Vec<T>; 3],
        first: usize,
        out: &mut [u8],
    ) {
        let sx = if cw == 0 { 1 } else { w.div_ceil(cw) };
        let sy = if ch == 0 { 1 } else { h.div_ceil(ch) };
        let c = |v: i64| v as i32;
        let (y0, c0, yk) = (c(self.y0), c(self.c0), c(self.yk));
        let (rv, bu, gu, gv) = (c(self.rv), c(self.bu), c(self.gu), c(self.gv));
        let clamp = |v: i32| ((v + 32768) >> 16).clamp(0, 255) as u8;
        let sample = |v: T| v.into() as i32;
        let (yp, up, vp) = (&planes[0], &planes[1], &planes[2]);
        for (k, line) in out.chunks_exact_mut(w * 4).enumerate() {
            let row = first + k;
            let Some(ys) = yp.get(row * w..(row + 1) * w) else {
                return;
            };
            let c0row = (row / sy).min(ch.saturating_sub(1)) * cw;
            let (us, vs) = match (up.get(c0row..c0row + cw), vp.get(c0row..c0row + cw)) {
                (Some(u), Some(v)) if cw > 0 => (u, v),
                // No chroma (monochrome): grey.
                _ => {
                    for (px, &y) in line.chunks_exact_mut(4).zip(ys) {
                        let g = clamp((sample(y) - y0) * yk);
                        px.copy_from_slice(&[g, g, g, 255]);
                    }
                    continue;
                }
            };
            let px = |out: &mut [u8], y: T, (r, g, b): (i32, i32, i32)| {
                let yv = (sample(y) - y0) * yk;
                out.copy_from_slice(&[clamp(yv + r), clamp(yv + g), clamp(yv + b), 255]);
            };
            let chroma = |u: T, v: T| {
                let (u, v) = (sample(u) - c0, sample(v) - c0);
                (rv * v, gu * u + gv * v, bu * u)
            };
            // Each chroma sample once, for the `sx` luma samples it covers (the last one
            // stands for any beyond the chroma plane's width). Two a sample (4:2:0, 4:2:2) in
            // pairs of fixed size, which the compiler unrolls.
            let mut done = 0;
            if sx == 2 {
                let pairs = line.chunks_exact_mut(8).zip(ys.chunks_exact(2));
                for ((out, y), (&u, &v)) in pairs.zip(us.iter().zip(vs)) {
                    let c = chroma(u, v);
                    let (a, b) = out.split_at_mut(4);
                    px(a, y[0], c);
                    px(b, y[1], c);
                    done += 2;
                }
            }
            let rest = line.get_mut(done * 4..).unwrap_or_default();
            for (k, (out, &y)) in rest.chunks_exact_mut(4).zip(&ys[done.min(w)..]).enumerate() {
                let ci = ((done + k) / sx).min(cw - 1);
                px(out, y, chroma(us[ci], vs[ci]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Coeffs, Colour, Planes, Yuv};

    /// The conversion as it was written first: each pixel on its own, in `i64`, its chroma
    /// sample found by division.
    fn per_pixel<T: Copy + Into<i64>>(
        k: &Coeffs,
        w: usize,
        h: usize,
        (cw, ch): (usize, usize),
        planes: &[Vec<T>; 3],
    ) -> Vec<u8> {
        let sx = if cw == 0 { 1 } else { w.div_ceil(cw) };
        let sy = if ch == 0 { 1 } else { h.div_ceil(ch) };
        let clamp = |v: i64| ((v + 32768) >> 16).clamp(0, 255) as u8;
        let mut out = Vec::with_capacity(w * h * 4);
        for row in 0..h {
            for x in 0..w {
                let yv = (planes[0][row * w + x].into() - k.y0) * k.yk;
                if cw == 0 || ch == 0 {
                    let g = clamp(yv);
                    out.extend([g, g, g, 255]);
                    continue;
                }
                let c = (row / sy).min(ch - 1) * cw + (x / sx).min(cw - 1);
                let u = planes[1][c].into() - k.c0;
                let v = planes[2][c].into() - k.c0;
                out.extend([
                    clamp(yv + k.rv * v),
                    clamp(yv + k.gu * u + k.gv * v),
                    clamp(yv + k.bu * u),
                    255,
                ]);
            }
        }
        out
    }

    /// Samples from a fixed sequence (xorshift), every value of `bits` bits.
    fn samples(n: usize, bits: u8, seed: &mut u64) -> Vec<u16> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                (*seed >> 20) as u16 & ((1u32 << bits) - 1) as u16
            })
            .collect()
    }

    #[test]
    fn rgb_is_the_per_pixel_formula_for_every_layout_depth_and_description() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        // 4:2:0 odd and even, 4:2:2, 4:4:4, monochrome; tall enough to be split over threads.
        let layouts = [
            (17, 9, (9, 5)),
            (64, 300, (32, 150)),
            (33, 130, (17, 130)),
            (20, 140, (20, 140)),
            (15, 200, (0, 0)),
        ];
        for (w, h, (cw, ch)) in layouts {
            for bits in [8u8, 10, 16] {
                for (matrix, full_range) in [(1, false), (5, true), (9, false)] {
                    let y = samples(w * h, bits, &mut seed);
                    let u = samples(cw * ch, bits, &mut seed);
                    let v = samples(cw * ch, bits, &mut seed);
                    let planes = if bits == 8 {
                        let b = |p: &[u16]| p.iter().map(|&s| s as u8).collect::<Vec<u8>>();
                        Planes::U8([b(&y), b(&u), b(&v)])
                    } else {
                        Planes::U16([y, u, v])
                    };
                    let pic = Yuv {
                        width: w,
                        height: h,
                        chroma: (cw, ch),
                        bit_depth: bits,
                        planes,
                        colour: Colour { matrix, full_range },
                        tag: 0,
                    };
                    let got = pic.to_rgba();
                    let want = match &pic.planes {
                        Planes::U8(p) => per_pixel(&pic.coeffs(), w, h, (cw, ch), p),
                        Planes::U16(p) => per_pixel(&pic.coeffs(), w, h, (cw, ch), p),
                    };
                    assert_eq!(got.len(), w * h * 4);
                    assert!(
                        got == want,
                        "{w}x{h} chroma {cw}x{ch}, {bits} bits, matrix {matrix}, full {full_range}"
                    );
                }
            }
        }
    }
}
