//! An image drawn: values through a colormap over a range, turned and flipped, thumbnails,
//! the value under the cursor, map coordinates.

use super::{occupancy_color, Colormap, Image, Orientation, Pixels};

impl Image {
    /// Whether the pixels are single values drawn through a colormap.
    pub fn is_scalar(&self) -> bool {
        !matches!(self.pixels, Pixels::Rgba(_) | Pixels::Occupancy(_))
    }

    /// The value at `(x, y)` as text (`r 12 g 34 b 56 a 255`, `1234`, `1.532`), if inside.
    pub fn value_text(&self, x: u32, y: u32) -> Option<String> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = y as usize * self.width as usize + x as usize;
        Some(match &self.pixels {
            Pixels::Rgba(v) => {
                let p = v.get(i * 4..i * 4 + 4)?;
                format!("r {} g {} b {} a {}", p[0], p[1], p[2], p[3])
            }
            Pixels::Mono8(v) => v.get(i)?.to_string(),
            Pixels::U16(v) => v.get(i)?.to_string(),
            Pixels::I16(v) => v.get(i)?.to_string(),
            Pixels::F32(v) => format!("{:.4}", v.get(i)?),
            Pixels::Points(v) => {
                let row = self.height - 1 - y;
                let (wx, wy) = self.map?.cell_centre(x, row);
                let name = crate::media::image::topdown::value_name(&self.encoding);
                match *v.get(i)? {
                    z if z.is_nan() => format!("({wx:.2}, {wy:.2}) m · no point"),
                    z => format!("({wx:.2}, {wy:.2}) m · {name} {z:.3} m"),
                }
            }
            Pixels::Occupancy(v) => {
                let what = match *v.get(i)? {
                    c @ 0..=100 => format!("{c}% occupied"),
                    -1 => "unknown".into(),
                    c => format!("{c} (not 0-100 or -1)"),
                };
                // The grid's own row (row 0 at the origin, drawn at the bottom) and the frame's
                // coordinates of the cell's centre.
                let row = self.height - 1 - y;
                match self.map {
                    Some(m) if m.resolution > 0.0 => {
                        let (wx, wy) = m.cell_centre(x, row);
                        format!("cell {x}, {row} · ({wx:.3}, {wy:.3}) m · {what}")
                    }
                    _ => format!("cell {x}, {row} · {what}"),
                }
            }
        })
    }

    fn scalar(&self, i: usize) -> f32 {
        match &self.pixels {
            Pixels::Mono8(v) => f32::from(v[i]),
            Pixels::U16(v) => f32::from(v[i]),
            Pixels::I16(v) => f32::from(v[i]),
            Pixels::F32(v) => v[i],
            Pixels::Occupancy(v) => f32::from(v[i]),
            Pixels::Points(v) => v[i],
            Pixels::Rgba(_) => 0.0,
        }
    }

    /// The smallest and largest valid value of a single-channel image: finite, and for depth
    /// (16-bit unsigned, float) not 0, which depth cameras write for "no reading".
    pub fn auto_range(&self) -> Option<(f32, f32)> {
        let zero_invalid = matches!(self.pixels, Pixels::U16(_) | Pixels::F32(_));
        let n = (self.width * self.height) as usize;
        let mut r: Option<(f32, f32)> = None;
        for i in 0..n {
            let v = self.scalar(i);
            if !v.is_finite() || (zero_invalid && v == 0.0) {
                continue;
            }
            r = Some(match r {
                None => (v, v),
                Some((a, b)) => (a.min(v), b.max(v)),
            });
        }
        if !self.is_scalar() {
            return None;
        }
        r
    }

    /// The range a single-channel image is drawn over when the user has not set one: the whole
    /// of mono8, the valid values of anything else.
    pub fn default_range(&self) -> (f32, f32) {
        match self.pixels {
            Pixels::Mono8(_) => (0.0, 255.0),
            _ => self.auto_range().unwrap_or((0.0, 1.0)),
        }
    }

    /// RGBA pixels of the image as drawn: turned and flipped, single channels through `cmap`
    /// over `range` (invalid values black). Returns the drawn width and height too.
    pub fn render(&self, cmap: Colormap, range: (f32, f32), o: Orientation) -> (u32, u32, Vec<u8>) {
        let (w, h) = (self.width, self.height);
        let (dw, dh) = o.size(w, h);
        if let (Pixels::Rgba(v), true) = (&self.pixels, o == Orientation::default()) {
            return (w, h, v.clone());
        }
        let mut out = Vec::with_capacity(dw as usize * dh as usize * 4);
        let (lo, hi) = range;
        let span = if hi > lo { hi - lo } else { 1.0 };
        let lut = colormap_lut(cmap);
        let identity = o == Orientation::default();
        for y in 0..dh {
            for x in 0..dw {
                let (sx, sy) = if identity {
                    (x, y)
                } else {
                    o.to_source(x, y, w, h)
                };
                let i = sy as usize * w as usize + sx as usize;
                match &self.pixels {
                    Pixels::Rgba(v) => out.extend_from_slice(&v[i * 4..i * 4 + 4]),
                    Pixels::Occupancy(v) => out.extend_from_slice(&occupancy_color(v[i])),
                    _ => {
                        let v = self.scalar(i);
                        if !v.is_finite() {
                            out.extend_from_slice(&[0, 0, 0, 255]);
                        } else {
                            let t = ((v - lo) / span).clamp(0.0, 1.0);
                            let c = lut[(t * 255.0).round() as usize];
                            out.extend_from_slice(&[c[0], c[1], c[2], 255]);
                        }
                    }
                }
            }
        }
        (dw, dh, out)
    }

    /// A smaller copy, at most `max` pixels on its longer side (nearest neighbour): thumbnails.
    pub fn thumbnail(&self, max: u32) -> (u32, u32, Vec<u8>) {
        let range = self.default_range();
        let cmap = match self.pixels {
            Pixels::U16(_) | Pixels::I16(_) | Pixels::F32(_) | Pixels::Points(_) => Colormap::Turbo,
            _ => Colormap::Grey,
        };
        let (w, h) = (self.width, self.height);
        let scale = (max as f32 / w.max(h) as f32).min(1.0);
        let tw = ((w as f32 * scale).round() as u32).max(1);
        let th = ((h as f32 * scale).round() as u32).max(1);
        let small = Image {
            width: tw,
            height: th,
            encoding: self.encoding.clone(),
            map: None,
            pixels: {
                let idx = |x: u32, y: u32| {
                    let sx = (u64::from(x) * u64::from(w) / u64::from(tw)) as usize;
                    let sy = (u64::from(y) * u64::from(h) / u64::from(th)) as usize;
                    sy * w as usize + sx
                };
                let coords = (0..th).flat_map(|y| (0..tw).map(move |x| (x, y)));
                match &self.pixels {
                    Pixels::Rgba(v) => Pixels::Rgba(
                        coords
                            .flat_map(|(x, y)| {
                                let i = idx(x, y) * 4;
                                [v[i], v[i + 1], v[i + 2], v[i + 3]]
                            })
                            .collect(),
                    ),
                    Pixels::Mono8(v) => Pixels::Mono8(coords.map(|(x, y)| v[idx(x, y)]).collect()),
                    Pixels::U16(v) => Pixels::U16(coords.map(|(x, y)| v[idx(x, y)]).collect()),
                    Pixels::I16(v) => Pixels::I16(coords.map(|(x, y)| v[idx(x, y)]).collect()),
                    Pixels::F32(v) => Pixels::F32(coords.map(|(x, y)| v[idx(x, y)]).collect()),
                    Pixels::Occupancy(v) => {
                        Pixels::Occupancy(coords.map(|(x, y)| v[idx(x, y)]).collect())
                    }
                    Pixels::Points(v) => {
                        Pixels::Points(coords.map(|(x, y)| v[idx(x, y)]).collect())
                    }
                }
            },
        };
        small.render(cmap, range, Orientation::default())
    }
}

/// 256 colours of a colormap.
pub fn colormap_lut(c: Colormap) -> [[u8; 3]; 256] {
    let mut lut = [[0u8; 3]; 256];
    for (i, e) in lut.iter_mut().enumerate() {
        *e = match c {
            Colormap::Grey => [i as u8; 3],
            Colormap::Turbo => turbo(i as f32 / 255.0),
        };
    }
    lut
}

/// Google's Turbo colormap, by its published polynomial approximation.
pub fn turbo(x: f32) -> [u8; 3] {
    let x = x.clamp(0.0, 1.0);
    let (x2, x3, x4, x5) = (x * x, x * x * x, x * x * x * x, x * x * x * x * x);
    let r = 0.135_721_38 + 4.615_392_6 * x - 42.660_324 * x2 + 132.131_08 * x3 - 152.942_4 * x4
        + 59.286_38 * x5;
    let g = 0.091_402_61 + 2.194_188_4 * x + 4.842_966_6 * x2 - 14.185_033 * x3
        + 4.277_298_6 * x4
        + 2.829_566 * x5;
    let b = 0.106_673_3 + 12.641_946 * x - 60.582_05 * x2 + 110.362_77 * x3 - 89.903_11 * x4
        + 27.348_25 * x5;
    let c = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    [c(r), c(g), c(b)]
}
