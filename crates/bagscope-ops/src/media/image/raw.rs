//! Raw `sensor_msgs/Image` pixels: each encoding's layout, byte order and step, bayer
//! patterns demosaiced, yuv422 turned to RGB.

use super::{Image, ImageError, Pixels, MAX_PIXELS};

/// Bytes a pixel takes in a raw encoding, and how its pixels are kept.
pub(super) fn raw_layout(enc: &str) -> Option<usize> {
    Some(match enc {
        "rgb8" | "bgr8" | "8UC3" => 3,
        "rgba8" | "bgra8" | "8UC4" => 4,
        "mono8" | "8UC1" | "8SC1" => 1,
        "mono16" | "16UC1" | "16SC1" => 2,
        "32FC1" => 4,
        "rgb16" | "bgr16" | "16UC3" => 6,
        "rgba16" | "bgra16" | "16UC4" => 8,
        "64FC1" => 8,
        "yuv422" | "uyvy" | "yuv422_yuy2" | "yuyv" => 2,
        e if e.starts_with("bayer_") && e.ends_with('8') => 1,
        e if e.starts_with("bayer_") && e.ends_with("16") => 2,
        _ => return None,
    })
}

/// Decodes a raw `sensor_msgs/Image`.
pub fn decode_raw(
    encoding: &str,
    width: u32,
    height: u32,
    step: u64,
    big_endian: bool,
    data: &[u8],
) -> Result<Image, ImageError> {
    let enc = encoding.trim();
    let bpp = raw_layout(enc)
        .ok_or_else(|| ImageError::Unsupported(format!("unsupported encoding {enc:?}")))?;
    let (w, h) = (width as usize, height as usize);
    let pixels = u64::from(width) * u64::from(height);
    if pixels == 0 {
        return Err(ImageError::Size(format!(
            "empty image ({width} × {height})"
        )));
    }
    if pixels > MAX_PIXELS {
        return Err(ImageError::Size(format!("{width} × {height} is too large")));
    }
    let row = (w * bpp) as u64;
    if step < row {
        return Err(ImageError::field(
            "step",
            format!("step {step} is less than width × {bpp} bytes = {row}"),
        ));
    }
    let need = step * (u64::from(height) - 1) + row;
    if (data.len() as u64) < need {
        return Err(ImageError::Size(format!(
            "{} data bytes, {width} × {height} {enc} with step {step} needs {need}",
            data.len()
        )));
    }
    let step = step as usize;
    let px = |x: usize, y: usize| &data[y * step + x * bpp..y * step + x * bpp + bpp];
    let u16_of = |b: &[u8]| {
        if big_endian {
            u16::from_be_bytes([b[0], b[1]])
        } else {
            u16::from_le_bytes([b[0], b[1]])
        }
    };
    let rgba = || Vec::with_capacity(w * h * 4);
    let out = match enc {
        "rgb8" | "rgba8" | "bgr8" | "bgra8" | "8UC3" | "8UC4" => {
            let bgr = enc.starts_with("bgr") || enc.starts_with("8UC");
            let mut v = vec![0u8; w * h * 4];
            for (y, out) in v.chunks_exact_mut(w * 4).enumerate() {
                let row = &data[y * step..y * step + w * bpp];
                for (p, o) in row.chunks_exact(bpp).zip(out.chunks_exact_mut(4)) {
                    let (r, b) = if bgr { (p[2], p[0]) } else { (p[0], p[2]) };
                    o.copy_from_slice(&[r, p[1], b, if bpp == 4 { p[3] } else { 255 }]);
                }
            }
            Pixels::Rgba(v)
        }
        "rgb16" | "bgr16" | "16UC3" | "rgba16" | "bgra16" | "16UC4" => {
            let bgr = !enc.starts_with("rgb");
            let mut v = rgba();
            for y in 0..h {
                for x in 0..w {
                    let p = px(x, y);
                    let c = |i: usize| (u16_of(&p[2 * i..]) >> 8) as u8;
                    let (r, b) = if bgr { (c(2), c(0)) } else { (c(0), c(2)) };
                    v.extend_from_slice(&[r, c(1), b, if bpp == 8 { c(3) } else { 255 }]);
                }
            }
            Pixels::Rgba(v)
        }
        "mono8" | "8UC1" | "8SC1" => {
            let mut v = Vec::with_capacity(w * h);
            for y in 0..h {
                v.extend_from_slice(&data[y * step..y * step + w]);
            }
            Pixels::Mono8(v)
        }
        "mono16" | "16UC1" => Pixels::U16(
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .map(|(x, y)| u16_of(px(x, y)))
                .collect(),
        ),
        "16SC1" => Pixels::I16(
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .map(|(x, y)| u16_of(px(x, y)) as i16)
                .collect(),
        ),
        "32FC1" => Pixels::F32(
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .map(|(x, y)| {
                    let b = px(x, y);
                    let a = [b[0], b[1], b[2], b[3]];
                    if big_endian {
                        f32::from_be_bytes(a)
                    } else {
                        f32::from_le_bytes(a)
                    }
                })
                .collect(),
        ),
        "64FC1" => Pixels::F32(
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .map(|(x, y)| {
                    let b = px(x, y);
                    let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
                    (if big_endian {
                        f64::from_be_bytes(a)
                    } else {
                        f64::from_le_bytes(a)
                    }) as f32
                })
                .collect(),
        ),
        "yuv422" | "uyvy" | "yuv422_yuy2" | "yuyv" => {
            // Two pixels share one U and one V: UYVY (ROS's yuv422) or YUYV.
            let uyvy = enc == "yuv422" || enc == "uyvy";
            let mut v = rgba();
            for y in 0..h {
                let r = &data[y * step..y * step + w * 2];
                for x in 0..w {
                    let pair = &r[(x & !1) * 2..((x & !1) * 2 + 4).min(r.len())];
                    let (yy, u, vv) = match (uyvy, pair.len()) {
                        (true, 4) => (pair[1 + (x & 1) * 2], pair[0], pair[2]),
                        (false, 4) => (pair[(x & 1) * 2], pair[1], pair[3]),
                        // An odd width's last pixel has no pair: grey.
                        (true, _) => (pair.get(1).copied().unwrap_or(0), 128, 128),
                        (false, _) => (pair.first().copied().unwrap_or(0), 128, 128),
                    };
                    v.extend_from_slice(&yuv_to_rgb(yy, u, vv));
                }
            }
            Pixels::Rgba(v)
        }
        bayer => {
            let pattern = bayer
                .strip_prefix("bayer_")
                .and_then(|p| p.get(..4))
                .ok_or_else(|| ImageError::Unsupported(format!("unsupported encoding {enc:?}")))?;
            let sample = |x: usize, y: usize| -> u8 {
                let p = px(x.min(w - 1), y.min(h - 1));
                if bpp == 2 {
                    (u16_of(p) >> 8) as u8
                } else {
                    p[0]
                }
            };
            Pixels::Rgba(demosaic(pattern, w, h, sample)?)
        }
    };
    Ok(Image {
        width,
        height,
        encoding: enc.to_string(),
        pixels: out,
        map: None,
    })
}

/// BT.601 YUV (video range) to RGBA.
pub(super) fn yuv_to_rgb(y: u8, u: u8, v: u8) -> [u8; 4] {
    let c = f32::from(y) - 16.0;
    let d = f32::from(u) - 128.0;
    let e = f32::from(v) - 128.0;
    let cl = |x: f32| x.round().clamp(0.0, 255.0) as u8;
    [
        cl(1.164 * c + 1.596 * e),
        cl(1.164 * c - 0.392 * d - 0.813 * e),
        cl(1.164 * c + 2.017 * d),
        255,
    ]
}

/// A simple demosaic: each pixel takes the red, mean green and blue of the 2 × 2 cell it is in.
pub(super) fn demosaic(
    pattern: &str,
    w: usize,
    h: usize,
    sample: impl Fn(usize, usize) -> u8,
) -> Result<Vec<u8>, ImageError> {
    // Offsets of R and B within the cell; the two greens are the other two.
    let (r, b) = match pattern {
        "rggb" => ((0, 0), (1, 1)),
        "bggr" => ((1, 1), (0, 0)),
        "gbrg" => ((0, 1), (1, 0)),
        "grbg" => ((1, 0), (0, 1)),
        p => {
            return Err(ImageError::Unsupported(format!(
                "unknown bayer pattern {p:?}"
            )))
        }
    };
    let greens: Vec<(usize, usize)> = [(0, 0), (1, 0), (0, 1), (1, 1)]
        .into_iter()
        .filter(|&o| o != r && o != b)
        .collect();
    let mut v = Vec::with_capacity(w * h * 4);
    for y in 0..h {
        for x in 0..w {
            let (cx, cy) = (x & !1, y & !1);
            let at = |(dx, dy): (usize, usize)| sample(cx + dx, cy + dy);
            let g = (u16::from(at(greens[0])) + u16::from(at(greens[1]))) / 2;
            v.extend_from_slice(&[at(r), g as u8, at(b), 255]);
        }
    }
    Ok(v)
}
