//! Letters painted onto an image (`bagscope image --overlay`'s labels): the outlines of the
//! Ubuntu typeface egui draws with (`epaint_default_fonts`), read by `skrifa` (both already in
//! the tree through egui), flattened to polygons and filled with four sub-rows a pixel row for
//! smooth edges.

use bagscope_ops::media::annotate::draw::Canvas;
use skrifa::instance::{LocationRef, Size};
use skrifa::outline::{DrawSettings, OutlinePen};
use skrifa::{FontRef, MetadataProvider};

/// A typeface to paint text with.
pub struct Glyphs {
    font: FontRef<'static>,
}

/// Collects a glyph's outline as closed polygons, curves cut into short lines.
struct Pen {
    contours: Vec<Vec<[f32; 2]>>,
    at: [f32; 2],
    origin: [f32; 2],
}

impl Pen {
    /// A point of the glyph (y up, from its baseline) in the image (y down).
    fn put(&mut self, x: f32, y: f32) {
        let p = [self.origin[0] + x, self.origin[1] - y];
        if let Some(c) = self.contours.last_mut() {
            c.push(p);
        }
        self.at = [x, y];
    }
}

impl OutlinePen for Pen {
    fn move_to(&mut self, x: f32, y: f32) {
        self.contours.push(Vec::new());
        self.put(x, y);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        self.put(x, y);
    }
    fn quad_to(&mut self, cx: f32, cy: f32, x: f32, y: f32) {
        let [x0, y0] = self.at;
        for i in 1..=6 {
            let t = i as f32 / 6.0;
            let u = 1.0 - t;
            self.put(
                u * u * x0 + 2.0 * u * t * cx + t * t * x,
                u * u * y0 + 2.0 * u * t * cy + t * t * y,
            );
        }
    }
    fn curve_to(&mut self, c0x: f32, c0y: f32, c1x: f32, c1y: f32, x: f32, y: f32) {
        let [x0, y0] = self.at;
        for i in 1..=8 {
            let t = i as f32 / 8.0;
            let u = 1.0 - t;
            let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
            self.put(
                a * x0 + b * c0x + c * c1x + d * x,
                a * y0 + b * c0y + c * c1y + d * y,
            );
        }
    }
    fn close(&mut self) {}
}

impl Glyphs {
    /// The Ubuntu typeface, or `None` where its bytes do not read as a font.
    pub fn new() -> Option<Glyphs> {
        FontRef::new(epaint_default_fonts::UBUNTU_LIGHT)
            .ok()
            .map(|font| Glyphs { font })
    }

    /// The width of `text` at `px` pixels high.
    pub fn width(&self, text: &str, px: f32) -> f32 {
        let m = self
            .font
            .glyph_metrics(Size::new(px), LocationRef::default());
        let map = self.font.charmap();
        text.chars()
            .map(|c| {
                map.map(c)
                    .and_then(|g| m.advance_width(g))
                    .unwrap_or(px * 0.5)
            })
            .sum()
    }

    /// Paints `text`, `px` pixels high, its box's top-left at `at`.
    pub fn draw(&self, canvas: &mut Canvas, at: [f32; 2], text: &str, px: f32, color: [u8; 4]) {
        let size = Size::new(px);
        let m = self.font.glyph_metrics(size, LocationRef::default());
        let outlines = self.font.outline_glyphs();
        let map = self.font.charmap();
        let ascent = self.font.metrics(size, LocationRef::default()).ascent;
        let mut pen = Pen {
            contours: Vec::new(),
            at: [0.0; 2],
            origin: [at[0], at[1] + ascent],
        };
        for c in text.chars() {
            let Some(g) = map.map(c) else {
                pen.origin[0] += px * 0.5;
                continue;
            };
            if let Some(o) = outlines.get(g) {
                let _ = o.draw(
                    DrawSettings::unhinted(size, LocationRef::default()),
                    &mut pen,
                );
            }
            pen.origin[0] += m.advance_width(g).unwrap_or(px * 0.5);
            if pen.origin[0] > canvas.width as f32 + px {
                break;
            }
        }
        fill(canvas, &pen.contours, color);
    }
}

/// Fills contours together (non-zero winding, as TrueType fills), four sub-rows a row.
fn fill(canvas: &mut Canvas, contours: &[Vec<[f32; 2]>], color: [u8; 4]) {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for p in contours.iter().flatten() {
        lo = lo.min(p[1]);
        hi = hi.max(p[1]);
    }
    if lo > hi {
        return;
    }
    let w = canvas.width as usize;
    let y0 = (lo.floor() as i64).max(0);
    let y1 = (hi.ceil() as i64).min(i64::from(canvas.height) - 1);
    let mut cover = vec![0f32; w];
    let mut xs: Vec<(f32, i32)> = Vec::new();
    for y in y0..=y1 {
        cover.iter_mut().for_each(|c| *c = 0.0);
        let (mut xmin, mut xmax) = (usize::MAX, 0usize);
        for sub in 0..4 {
            // Pixel centres at integers: the row covers [y - 0.5, y + 0.5].
            let yc = y as f32 - 0.375 + sub as f32 * 0.25;
            xs.clear();
            for c in contours {
                let n = c.len();
                for i in 0..n {
                    let (a, b) = (c[i], c[(i + 1) % n]);
                    if (a[1] <= yc) != (b[1] <= yc) {
                        let x = a[0] + (yc - a[1]) * (b[0] - a[0]) / (b[1] - a[1]);
                        xs.push((x, if b[1] > a[1] { 1 } else { -1 }));
                    }
                }
            }
            xs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut wind = 0;
            for k in 0..xs.len() {
                let before = wind;
                wind += xs[k].1;
                if before == 0 && wind != 0 {
                    let start = xs[k].0;
                    let end = xs[k + 1..]
                        .iter()
                        .scan(wind, |wd, e| {
                            *wd += e.1;
                            Some((*wd, e.0))
                        })
                        .find(|(wd, _)| *wd == 0)
                        .map_or(start, |(_, x)| x);
                    // Each pixel gets the share of [x - 0.5, x + 0.5] inside.
                    let a = ((start + 0.5).floor().max(0.0)) as usize;
                    let b = ((end + 0.5).ceil().max(0.0) as usize).min(w);
                    for (x, c) in cover.iter_mut().enumerate().take(b).skip(a) {
                        let (l, r) = (x as f32 - 0.5, x as f32 + 0.5);
                        let inside = (end.min(r) - start.max(l)).max(0.0);
                        *c += inside * 0.25;
                    }
                    xmin = xmin.min(a);
                    xmax = xmax.max(b);
                }
            }
        }
        for (x, c) in cover.iter().enumerate().take(xmax).skip(xmin) {
            if *c > 0.0 {
                canvas.blend(x as i64, y, color, c.min(1.0));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_cover_pixels_inside_their_box() {
        let g = Glyphs::new().expect("the font reads");
        let (w, h) = (60u32, 24u32);
        let mut px = vec![0u8; (w * h * 4) as usize];
        let mut c = Canvas {
            width: w,
            height: h,
            px: &mut px,
        };
        g.draw(&mut c, [2.0, 2.0], "HI", 16.0, [255, 255, 255, 255]);
        let lit: Vec<(usize, usize)> = (0..(w * h) as usize)
            .filter(|i| px[i * 4] > 128)
            .map(|i| (i % w as usize, i / w as usize))
            .collect();
        assert!(lit.len() > 30, "{} pixels lit", lit.len());
        let width = g.width("HI", 16.0);
        assert!(lit
            .iter()
            .all(|&(x, y)| x as f32 <= 2.0 + width + 1.0 && y <= 20));
    }
}
