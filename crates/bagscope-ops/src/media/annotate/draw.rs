//! Shapes painted onto RGBA pixels (for `bagscope image --overlay`), blended by their alpha.
//! Coordinates are OpenCV's: pixel `(i, j)` is centred on `(i, j)`, so a projected point lands
//! on the pixel `cv2.projectPoints` rounds it to. Each shape is painted only over the pixels
//! of its bounds, clipped to the image, so a shape far outside costs nothing.

use super::{seg_dist, Kind, Rgba, Shape};

/// An RGBA image being painted.
pub struct Canvas<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// The pixels, 4 bytes each, row by row.
    pub px: &'a mut [u8],
}

impl Canvas<'_> {
    /// Blends `c` over pixel `(x, y)` with coverage `a` (0 to 1).
    pub fn blend(&mut self, x: i64, y: i64, c: Rgba, a: f32) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        let Some(p) = self.px.get_mut(i..i + 4) else {
            return;
        };
        if a >= 1.0 && c[3] == 255 {
            // Opaque: written, not blended.
            p.copy_from_slice(&c);
            return;
        }
        let a = (a * f32::from(c[3]) / 255.0).clamp(0.0, 1.0);
        for k in 0..3 {
            p[k] = (f32::from(p[k]) * (1.0 - a) + f32::from(c[k]) * a).round() as u8;
        }
        p[3] = p[3].max((a * 255.0) as u8);
    }

    /// The pixels of the box `[x0, x1] × [y0, y1]` (pixel centres), clipped to the image.
    fn span(&self, x0: f32, x1: f32, y0: f32, y1: f32) -> Option<(i64, i64, i64, i64)> {
        let c = |v: f32, hi: u32| (v.round() as i64).clamp(-1, i64::from(hi));
        let (a, b) = (c(x0.floor(), self.width), c(x1.ceil(), self.width));
        let (d, e) = (c(y0.floor(), self.height), c(y1.ceil(), self.height));
        (a <= b && d <= e && b >= 0 && e >= 0).then_some((a, b, d, e))
    }

    /// A line from `a` to `b`, `w` pixels wide (anti-aliased over half a pixel).
    pub fn line(&mut self, a: [f32; 2], b: [f32; 2], w: f32, c: Rgba) {
        let r = (w / 2.0).max(0.5);
        let Some((x0, x1, y0, y1)) = self.span(
            a[0].min(b[0]) - r - 1.0,
            a[0].max(b[0]) + r + 1.0,
            a[1].min(b[1]) - r - 1.0,
            a[1].max(b[1]) + r + 1.0,
        ) else {
            return;
        };
        // A very long line off the image: only its visible part is walked.
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = seg_dist([x as f32, y as f32], a, b);
                let cov = (r + 0.5 - d).clamp(0.0, 1.0);
                if cov > 0.0 {
                    self.blend(x, y, c, cov);
                }
            }
        }
    }

    /// A disc of radius `r` about `p`.
    pub fn disc(&mut self, p: [f32; 2], r: f32, c: Rgba) {
        let r = r.max(0.5);
        let Some((x0, x1, y0, y1)) = self.span(
            p[0] - r - 1.0,
            p[0] + r + 1.0,
            p[1] - r - 1.0,
            p[1] + r + 1.0,
        ) else {
            return;
        };
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = (x as f32 - p[0]).hypot(y as f32 - p[1]);
                let cov = (r + 0.5 - d).clamp(0.0, 1.0);
                if cov > 0.0 {
                    self.blend(x, y, c, cov);
                }
            }
        }
    }

    /// A ring of radius `r`, `w` wide, about `p`.
    pub fn ring(&mut self, p: [f32; 2], r: f32, w: f32, c: Rgba) {
        let h = (w / 2.0).max(0.5);
        let Some((x0, x1, y0, y1)) = self.span(
            p[0] - r - h - 1.0,
            p[0] + r + h + 1.0,
            p[1] - r - h - 1.0,
            p[1] + r + h + 1.0,
        ) else {
            return;
        };
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = ((x as f32 - p[0]).hypot(y as f32 - p[1]) - r).abs();
                let cov = (h + 0.5 - d).clamp(0.0, 1.0);
                if cov > 0.0 {
                    self.blend(x, y, c, cov);
                }
            }
        }
    }

    /// The inside of a polygon (even-odd), at pixel centres: row by row, between the
    /// crossings of its edges.
    pub fn fill(&mut self, pts: &[[f32; 2]], c: Rgba) {
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for p in pts {
            lo = lo.min(p[1]);
            hi = hi.max(p[1]);
        }
        let Some((_, _, y0, y1)) = self.span(0.0, 0.0, lo, hi) else {
            return;
        };
        let n = pts.len();
        let mut xs: Vec<f32> = Vec::new();
        for y in y0.max(0)..=y1.min(i64::from(self.height) - 1) {
            let yc = y as f32;
            xs.clear();
            for i in 0..n {
                let (a, b) = (pts[i], pts[(i + n - 1) % n]);
                if (a[1] > yc) != (b[1] > yc) {
                    xs.push((b[0] - a[0]) * (yc - a[1]) / (b[1] - a[1]) + a[0]);
                }
            }
            xs.sort_by(f32::total_cmp);
            for w in xs.chunks_exact(2) {
                let x0 = (w[0].ceil() as i64).max(0);
                let x1 = ((w[1].ceil() as i64) - 1).min(i64::from(self.width) - 1);
                for x in x0..=x1 {
                    self.blend(x, y, c, 1.0);
                }
            }
        }
    }

    /// A box, filled (a text's background).
    pub fn rect(&mut self, x0: f32, y0: f32, x1: f32, y1: f32, c: Rgba) {
        self.fill(&[[x0, y0], [x1, y0], [x1, y1], [x0, y1]], c);
    }

    /// A shape (a text's background only: its letters are the caller's, see [`Canvas::text_box`]).
    pub fn shape(&mut self, s: &Shape) {
        let pts = &s.points;
        let col = |i: usize| s.colors.get(i).copied().unwrap_or(s.color);
        match s.kind {
            Kind::Circle => {
                let Some(&p) = pts.first() else { return };
                if let Some(f) = s.fill {
                    self.disc(p, s.radius, f);
                }
                self.ring(p, s.radius, s.thickness, s.color);
            }
            Kind::Points => {
                for (i, &p) in pts.iter().enumerate() {
                    self.disc(p, s.thickness / 2.0, col(i));
                }
            }
            Kind::LineList => {
                for (i, w) in pts.chunks_exact(2).enumerate() {
                    self.line(w[0], w[1], s.thickness, col(2 * i));
                }
            }
            Kind::LineStrip | Kind::LineLoop | Kind::Polygon => {
                let closed = s.kind != Kind::LineStrip;
                if closed {
                    if let Some(f) = s.fill {
                        self.fill(pts, f);
                    }
                }
                for (i, w) in pts.windows(2).enumerate() {
                    self.line(w[0], w[1], s.thickness, col(i));
                }
                if closed && pts.len() > 2 {
                    self.line(pts[pts.len() - 1], pts[0], s.thickness, col(pts.len() - 1));
                }
            }
            Kind::Text => {
                if let (Some(&p), Some(bg)) = (pts.first(), s.fill) {
                    let (w, h) = Canvas::text_box(s);
                    self.rect(p[0], p[1], p[0] + w, p[1] + h, bg);
                }
            }
        }
    }

    /// A text's box (width, height) in pixels, as drawn at its font size.
    pub fn text_box(s: &Shape) -> (f32, f32) {
        (
            s.font_size * 0.6 * s.text.chars().count() as f32,
            s.font_size * 1.2,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canvas(w: u32, h: u32) -> Vec<u8> {
        vec![0; (w * h * 4) as usize]
    }

    #[test]
    fn a_point_lands_on_its_pixel_and_far_shapes_cost_nothing() {
        let mut px = canvas(10, 10);
        let mut c = Canvas {
            width: 10,
            height: 10,
            px: &mut px,
        };
        c.disc([3.0, 4.0], 0.5, [255, 0, 0, 255]);
        let at = |x: usize, y: usize| px[(y * 10 + x) * 4];
        assert_eq!(at(3, 4), 255);
        assert_eq!(at(5, 4), 0);
        let mut c = Canvas {
            width: 10,
            height: 10,
            px: &mut px,
        };
        // A line a million pixels long, mostly outside: only the image is walked.
        c.line([-1e6, 5.0], [1e6, 5.0], 1.0, [0, 255, 0, 255]);
        assert_eq!(px[(5 * 10 + 9) * 4 + 1], 255);
    }
}
