//! Images out of `sensor_msgs/Image` and `sensor_msgs/CompressedImage` messages (ROS 1 and
//! ROS 2): raw encodings (rgb8, rgba8, bgr8, bgra8, mono8, mono16, 8UC1/3/4, 16UC1, 16SC1,
//! 32FC1, bayer_*, yuv422), jpeg and png recognised from their bytes, and `compressedDepth`
//! (a 12-byte depth header, then png). An [`Image`] keeps each pixel's value, so a depth or
//! float image is drawn through a [`Colormap`] over a range the caller picks, and the value
//! under the cursor can be read back. A `nav_msgs/OccupancyGrid` is shown as a map: free
//! cells light, occupied dark, unknown ones blue-grey, +y up.

use std::io::Cursor;

use crate::definition::msg::MsgDef;
use crate::encoding::{Node, Plan, Value};
use crate::error::ImageError;

/// Most pixels an image may have (a 16k × 16k frame); larger claims are refused before any
/// allocation.
pub const MAX_PIXELS: u64 = 1 << 28;

/// Most bytes a compressed image's decoder may allocate.
const MAX_DECODE_ALLOC: u64 = 2 << 30;

/// The pixels of an image, as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Pixels {
    /// Colour, 4 bytes a pixel (RGBA).
    Rgba(Vec<u8>),
    /// One byte a pixel.
    Mono8(Vec<u8>),
    /// Unsigned 16-bit (mono16, 16UC1, depth in mm).
    U16(Vec<u16>),
    /// Signed 16-bit.
    I16(Vec<i16>),
    /// 32-bit float (32FC1, depth in m).
    F32(Vec<f32>),
    /// An occupancy grid's cells, top row first: 0 (free) to 100 (occupied), -1 unknown.
    Occupancy(Vec<i8>),
    /// A scan's or cloud's points from above (see [`crate::ops::topdown`]): range or height, NaN
    /// where no point fell (0 is a value here, not "no reading").
    Points(Vec<f32>),
}

/// A decoded image.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// What it was (`rgb8`, `jpeg`, `32FC1 compressedDepth png`, …).
    pub encoding: String,
    /// The pixels, row by row.
    pub pixels: Pixels,
    /// Where a map's cells are in the world (an occupancy grid's `info`).
    pub map: Option<MapInfo>,
}

/// An occupancy grid's place in its frame: the size of a cell and the pose of cell (0, 0)'s
/// corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapInfo {
    /// Metres a cell.
    pub resolution: f64,
    /// The origin's x and y (m).
    pub origin: (f64, f64),
    /// The origin's turn about z (rad).
    pub yaw: f64,
}

impl MapInfo {
    /// The frame's (x, y) of the centre of cell (column, row), row 0 at the origin.
    pub fn cell_centre(&self, col: u32, row: u32) -> (f64, f64) {
        let u = (f64::from(col) + 0.5) * self.resolution;
        let v = (f64::from(row) + 0.5) * self.resolution;
        let (s, c) = self.yaw.sin_cos();
        (self.origin.0 + c * u - s * v, self.origin.1 + s * u + c * v)
    }
}

/// How single-channel values are turned into colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Colormap {
    /// Black to white.
    #[default]
    Grey,
    /// Google's Turbo: blue (near) to red (far).
    Turbo,
}

/// Rotation (quarter turns clockwise) and flips applied when drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Orientation {
    /// Quarter turns clockwise, 0 to 3.
    pub quarter_turns: u8,
    /// Mirror left-right (applied before turning).
    pub flip_h: bool,
    /// Mirror top-bottom (applied before turning).
    pub flip_v: bool,
}

impl Orientation {
    /// The drawn size of a `w` × `h` image.
    pub fn size(&self, w: u32, h: u32) -> (u32, u32) {
        if self.quarter_turns % 2 == 1 {
            (h, w)
        } else {
            (w, h)
        }
    }

    /// The source pixel drawn at `(x, y)` of the drawn image, for a `w` × `h` source.
    pub fn to_source(&self, x: u32, y: u32, w: u32, h: u32) -> (u32, u32) {
        // Undo the turn, then the flips.
        let (dw, dh) = self.size(w, h);
        let (mut sx, mut sy) = match self.quarter_turns % 4 {
            0 => (x, y),
            1 => (y, dw - 1 - x),
            2 => (dw - 1 - x, dh - 1 - y),
            _ => (dh - 1 - y, x),
        };
        if self.flip_h {
            sx = w - 1 - sx;
        }
        if self.flip_v {
            sy = h - 1 - sy;
        }
        (sx, sy)
    }
}

/// Whether a type is an image bagscope can show.
pub fn is_image_type(datatype: &str) -> bool {
    let base = datatype.rsplit('/').next().unwrap_or(datatype);
    is_camera_type(datatype) || matches!(base, "OccupancyGrid" | "LaserScan" | "PointCloud2")
}

/// Whether a type is a camera's image (`Image`, `CompressedImage`).
pub fn is_camera_type(datatype: &str) -> bool {
    let base = datatype.rsplit('/').next().unwrap_or(datatype);
    base == "Image" || base == "CompressedImage"
}

/// The value of field `name` of a decoded message.
pub fn field<'a>(def: &MsgDef, node: &'a Node, name: &str) -> Option<&'a Value> {
    node.field(def, name).map(|n| &n.value)
}

fn uint(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::U8(x) => Some(u64::from(*x)),
        Value::U16(x) => Some(u64::from(*x)),
        Value::U32(x) => Some(u64::from(*x)),
        Value::U64(x) => Some(*x),
        Value::I8(x) => u64::try_from(*x).ok(),
        Value::I32(x) => u64::try_from(*x).ok(),
        Value::Bool(b) => Some(u64::from(*b)),
        _ => None,
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

fn bytes(v: Option<&Value>) -> Option<&[u8]> {
    match v? {
        Value::Bytes(b) => Some(b),
        _ => None,
    }
}

/// Decodes an image message's bytes with its connection's plan.
pub fn decode_message(plan: &Plan, data: &[u8]) -> Result<Image, ImageError> {
    let node = plan.decode(data).map_err(ImageError::Decode)?;
    from_node(&plan.def, &node)
}

/// An image out of a decoded `Image` or `CompressedImage` message (told apart by its fields).
pub fn from_node(def: &MsgDef, node: &Node) -> Result<Image, ImageError> {
    if let (Some(info), Some(Value::Prims(crate::definition::msg::Primitive::I8, cells))) =
        (node.field(def, "info"), field(def, node, "data"))
    {
        return occupancy_grid(def, info, cells);
    }
    if node.field(def, "angle_increment").is_some() && node.field(def, "ranges").is_some() {
        return crate::ops::topdown::scan(def, node);
    }
    if node.field(def, "point_step").is_some() && node.field(def, "fields").is_some() {
        return crate::ops::topdown::cloud(def, node);
    }
    let data = bytes(field(def, node, "data"))
        .ok_or_else(|| ImageError::field("data", "no uint8[] data field"))?;
    if let Some(format) = text(field(def, node, "format")) {
        return decode_compressed(&format, data);
    }
    let get = |n: &str| {
        uint(field(def, node, n)).ok_or_else(|| ImageError::field(n, format!("no {n} field")))
    };
    let width = u32::try_from(get("width")?)
        .map_err(|_| ImageError::field("width", "width out of range"))?;
    let height = u32::try_from(get("height")?)
        .map_err(|_| ImageError::field("height", "height out of range"))?;
    let step = get("step")?;
    let big = get("is_bigendian").unwrap_or(0) != 0;
    let encoding = text(field(def, node, "encoding"))
        .ok_or_else(|| ImageError::field("encoding", "no encoding field"))?;
    decode_raw(&encoding, width, height, step, big, data)
}

/// A `nav_msgs/OccupancyGrid`'s cells (`info.width` × `info.height`, row 0 at the map's origin)
/// as an image with its top row the grid's last, so that +y points up as in rviz.
fn occupancy_grid(def: &MsgDef, info: &Node, cells: &[u8]) -> Result<Image, ImageError> {
    let get = |n: &str| {
        uint(field(def, info, n))
            .ok_or_else(|| ImageError::field(&format!("info.{n}"), format!("no info.{n} field")))
    };
    let width = u32::try_from(get("width")?)
        .map_err(|_| ImageError::field("info.width", "width out of range"))?;
    let height = u32::try_from(get("height")?)
        .map_err(|_| ImageError::field("info.height", "height out of range"))?;
    let n = u64::from(width) * u64::from(height);
    if n > MAX_PIXELS {
        return Err(ImageError::Size(format!(
            "{width}×{height} cells: more than bagscope shows"
        )));
    }
    if (cells.len() as u64) < n {
        return Err(ImageError::Size(format!(
            "{width}×{height} cells need {n} bytes of data, the message has {}",
            cells.len()
        )));
    }
    let w = width as usize;
    let mut out = Vec::with_capacity(n as usize);
    if w > 0 {
        for row in cells[..n as usize].chunks_exact(w).rev() {
            out.extend(row.iter().map(|&c| c as i8));
        }
    }
    Ok(Image {
        width,
        height,
        encoding: "occupancy grid".into(),
        pixels: Pixels::Occupancy(out),
        map: Some(map_info(def, info)),
    })
}

/// The place of a grid's cells from its `info` (resolution, origin's position and turn).
fn map_info(def: &MsgDef, info: &Node) -> MapInfo {
    let num = |path: &[&str]| {
        let mut n = info;
        for p in path {
            match n.field(def, p) {
                Some(x) => n = x,
                None => return None,
            }
        }
        n.value.as_f64()
    };
    let q = |c: &str| num(&["origin", "orientation", c]).unwrap_or(0.0);
    let (x, y, z, w) = (q("x"), q("y"), q("z"), q("w"));
    // A zero quaternion (an unset origin) is no turn.
    let yaw = if x == 0.0 && y == 0.0 && z == 0.0 {
        0.0
    } else {
        (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z))
    };
    MapInfo {
        resolution: num(&["resolution"]).unwrap_or(0.0),
        origin: (
            num(&["origin", "position", "x"]).unwrap_or(0.0),
            num(&["origin", "position", "y"]).unwrap_or(0.0),
        ),
        yaw,
    }
}

/// The colour of an occupancy cell: free light, occupied dark, unknown blue-grey.
fn occupancy_color(c: i8) -> [u8; 4] {
    match c {
        0..=100 => {
            let v = 235 - (i32::from(c) * 235 / 100) as u8;
            [v, v, v, 255]
        }
        _ => [96, 110, 128, 255],
    }
}

/// Bytes a pixel takes in a raw encoding, and how its pixels are kept.
fn raw_layout(enc: &str) -> Option<usize> {
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
fn yuv_to_rgb(y: u8, u: u8, v: u8) -> [u8; 4] {
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
fn demosaic(
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

/// What a compressed image's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compressed {
    /// JPEG (starts FF D8 FF).
    Jpeg,
    /// PNG.
    Png,
    /// `compressedDepth`: a 12-byte header (format, two depth quantisation floats), then PNG.
    CompressedDepth,
}

const PNG_MAGIC: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Recognises a compressed image from its bytes (the format string is often wrong).
pub fn sniff(data: &[u8]) -> Option<Compressed> {
    if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Compressed::Jpeg)
    } else if data.starts_with(&PNG_MAGIC) {
        Some(Compressed::Png)
    } else if data.get(12..20) == Some(&PNG_MAGIC[..]) {
        Some(Compressed::CompressedDepth)
    } else {
        None
    }
}

fn decode_image_bytes(
    data: &[u8],
    format: image::ImageFormat,
) -> Result<image::DynamicImage, ImageError> {
    let mut r = image::ImageReader::with_format(Cursor::new(data), format);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    limits.max_image_width = Some(1 << 16);
    limits.max_image_height = Some(1 << 16);
    r.limits(limits);
    r.decode().map_err(|e| ImageError::Codec(e.to_string()))
}

fn from_dynamic(d: image::DynamicImage, encoding: String) -> Result<Image, ImageError> {
    let (width, height) = (d.width(), d.height());
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::Size(format!("{width} × {height} is too large")));
    }
    let pixels = match d {
        image::DynamicImage::ImageLuma8(b) => Pixels::Mono8(b.into_raw()),
        image::DynamicImage::ImageLuma16(b) => Pixels::U16(b.into_raw()),
        other => Pixels::Rgba(other.into_rgba8().into_raw()),
    };
    Ok(Image {
        width,
        height,
        encoding,
        pixels,
        map: None,
    })
}

/// Decodes a `CompressedImage`'s data; `format` (`jpeg`, `png`, `16UC1; compressedDepth png`,
/// `bgr8; jpeg compressed bgr8`) only says how to read a compressedDepth image's values.
pub fn decode_compressed(format: &str, data: &[u8]) -> Result<Image, ImageError> {
    match sniff(data) {
        Some(Compressed::Jpeg) => from_dynamic(
            decode_image_bytes(data, image::ImageFormat::Jpeg)?,
            "jpeg".into(),
        ),
        Some(Compressed::Png) => from_dynamic(
            decode_image_bytes(data, image::ImageFormat::Png)?,
            "png".into(),
        ),
        Some(Compressed::CompressedDepth) => {
            let f32_at = |o: usize| {
                let b = &data[o..o + 4];
                f32::from_le_bytes([b[0], b[1], b[2], b[3]])
            };
            let (qa, qb) = (f32_at(4), f32_at(8));
            let img = from_dynamic(
                decode_image_bytes(&data[12..], image::ImageFormat::Png)?,
                String::new(),
            )?;
            let Pixels::U16(raw) = img.pixels else {
                return Err(ImageError::Unsupported(
                    "compressedDepth png is not 16-bit grey".into(),
                ));
            };
            let depth_enc = format.split([';', ' ']).next().unwrap_or("").trim();
            let pixels = if depth_enc == "32FC1" {
                // Inverse depth quantisation, as compressed_depth_image_transport writes it.
                Pixels::F32(
                    raw.iter()
                        .map(|&v| {
                            if v == 0 {
                                f32::NAN
                            } else {
                                qa / (f32::from(v) - qb)
                            }
                        })
                        .collect(),
                )
            } else {
                Pixels::U16(raw)
            };
            let enc = if depth_enc.is_empty() {
                "16UC1"
            } else {
                depth_enc
            };
            Ok(Image {
                encoding: format!("{enc} compressedDepth png"),
                pixels,
                ..img
            })
        }
        None => {
            let head: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
            Err(ImageError::Unsupported(format!(
                "format {format:?}: the data is neither jpeg nor png (starts {})",
                head.join(" ")
            )))
        }
    }
}

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
                let name = crate::ops::topdown::value_name(&self.encoding);
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
fn turbo(x: f32) -> [u8; 3] {
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

/// Writes RGBA pixels as a PNG file's bytes.
pub fn encode_png(w: u32, h: u32, rgba: &[u8]) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        rgba,
        w,
        h,
        image::ExtendedColorType::Rgba8,
    )
    .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

/// Writes RGB pixels as JPEG bytes (the demo's compressed camera, test fixtures).
pub fn encode_jpeg(w: u32, h: u32, rgb: &[u8], quality: u8) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode(rgb, w, h, image::ExtendedColorType::Rgb8)
        .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

/// Writes 16-bit grey pixels as PNG bytes (compressedDepth fixtures).
pub fn encode_png16(w: u32, h: u32, grey: &[u16]) -> Result<Vec<u8>, ImageError> {
    // The encoder takes 16-bit samples in native byte order.
    let mut be = Vec::with_capacity(grey.len() * 2);
    for v in grey {
        be.extend_from_slice(&v.to_ne_bytes());
    }
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        &be,
        w,
        h,
        image::ExtendedColorType::L16,
    )
    .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_cells_in_a_turned_frame() {
        let m = MapInfo {
            resolution: 1.0,
            origin: (10.0, 20.0),
            yaw: std::f64::consts::FRAC_PI_2,
        };
        // A quarter turn left: the grid's columns run along +y, its rows along -x.
        let (x, y) = m.cell_centre(0, 0);
        assert!((x - 9.5).abs() < 1e-9 && (y - 20.5).abs() < 1e-9, "{x} {y}");
        let (x, y) = m.cell_centre(3, 1);
        assert!((x - 8.5).abs() < 1e-9 && (y - 23.5).abs() < 1e-9, "{x} {y}");
    }

    #[test]
    fn orientation_round_trips_every_pixel() {
        let (w, h) = (5u32, 3u32);
        for q in 0..4 {
            for fh in [false, true] {
                for fv in [false, true] {
                    let o = Orientation {
                        quarter_turns: q,
                        flip_h: fh,
                        flip_v: fv,
                    };
                    let (dw, dh) = o.size(w, h);
                    let mut seen = vec![false; (w * h) as usize];
                    for y in 0..dh {
                        for x in 0..dw {
                            let (sx, sy) = o.to_source(x, y, w, h);
                            assert!(sx < w && sy < h);
                            seen[(sy * w + sx) as usize] = true;
                        }
                    }
                    assert!(seen.iter().all(|&s| s), "{o:?}");
                }
            }
        }
        // A quarter turn clockwise puts the source's bottom-left at the top-left.
        let o = Orientation {
            quarter_turns: 1,
            ..Default::default()
        };
        assert_eq!(o.to_source(0, 0, w, h), (0, h - 1));
    }

    #[test]
    fn raw_encodings_decode_to_their_pixels() {
        let img = decode_raw("bgr8", 2, 1, 6, false, &[1, 2, 3, 4, 5, 6]).unwrap();
        assert_eq!(img.pixels, Pixels::Rgba(vec![3, 2, 1, 255, 6, 5, 4, 255]));
        // Row padding is skipped.
        let img = decode_raw("mono8", 2, 2, 4, false, &[1, 2, 0, 0, 3, 4, 0, 0]).unwrap();
        assert_eq!(img.pixels, Pixels::Mono8(vec![1, 2, 3, 4]));
        let img = decode_raw("16UC1", 1, 1, 2, true, &[1, 2]).unwrap();
        assert_eq!(img.pixels, Pixels::U16(vec![0x0102]));
        let img = decode_raw("16SC1", 1, 1, 2, false, &[0xFF, 0xFF]).unwrap();
        assert_eq!(img.pixels, Pixels::I16(vec![-1]));
        let img = decode_raw("32FC1", 1, 1, 4, false, &1.5f32.to_le_bytes()).unwrap();
        assert_eq!(img.pixels, Pixels::F32(vec![1.5]));
        // Grey in UYVY stays grey.
        let img = decode_raw("yuv422", 2, 1, 4, false, &[128, 126, 128, 126]).unwrap();
        let Pixels::Rgba(p) = img.pixels else {
            panic!()
        };
        assert_eq!(&p[..4], &[128, 128, 128, 255]);
        // A red cell in RGGB.
        let img = decode_raw("bayer_rggb8", 2, 2, 2, false, &[200, 10, 20, 30]).unwrap();
        let Pixels::Rgba(p) = img.pixels else {
            panic!()
        };
        assert_eq!(&p[..4], &[200, 15, 30, 255]);
    }

    #[test]
    fn short_or_huge_images_are_errors() {
        assert!(decode_raw("rgb8", 4, 4, 12, false, &[0; 47]).is_err());
        assert!(decode_raw("rgb8", 4, 4, 11, false, &[0; 100]).is_err());
        assert!(decode_raw("rgb8", u32::MAX, u32::MAX, u64::MAX, false, &[]).is_err());
        assert!(decode_raw("weird", 1, 1, 1, false, &[0]).is_err());
        assert!(decode_compressed("jpeg", b"not an image").is_err());
        assert!(decode_compressed("jpeg", &[0xFF, 0xD8, 0xFF, 0, 1, 2]).is_err());
    }

    #[test]
    fn compressed_images_are_recognised_by_their_bytes() {
        let rgb: Vec<u8> = (0..16 * 8).flat_map(|_| [250u8, 10, 10]).collect();
        let jpeg = encode_jpeg(16, 8, &rgb, 95).unwrap();
        // Says png, is jpeg.
        let img = decode_compressed("png", &jpeg).unwrap();
        assert_eq!(
            (img.width, img.height, img.encoding.as_str()),
            (16, 8, "jpeg")
        );
        let Pixels::Rgba(p) = &img.pixels else {
            panic!()
        };
        assert!(p[0] > 230 && p[1] < 30 && p[2] < 30, "{:?}", &p[..4]);

        let depth: Vec<u16> = vec![0, 1000, 2000, 65535];
        let png = encode_png16(2, 2, &depth).unwrap();
        let mut cd = vec![0u8; 12];
        cd.extend_from_slice(&png);
        let img = decode_compressed("16UC1; compressedDepth png", &cd).unwrap();
        assert_eq!(img.pixels, Pixels::U16(depth.clone()));
        assert_eq!(img.auto_range(), Some((1000.0, 65535.0)));
        // 32FC1: inverse depth quantisation, 0 invalid.
        let mut cd = 0i32.to_le_bytes().to_vec();
        cd.extend_from_slice(&100.0f32.to_le_bytes());
        cd.extend_from_slice(&(-10.0f32).to_le_bytes());
        cd.extend_from_slice(&png);
        let img = decode_compressed("32FC1; compressedDepth", &cd).unwrap();
        let Pixels::F32(v) = &img.pixels else {
            panic!()
        };
        assert!(v[0].is_nan());
        assert!((v[1] - 100.0 / 1010.0).abs() < 1e-6);
    }

    #[test]
    fn colormaps_cover_the_range() {
        let img = decode_raw("32FC1", 3, 1, 12, false, &{
            let mut b = Vec::new();
            for v in [1.0f32, 2.0, f32::NAN] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b
        })
        .unwrap();
        let (w, h, px) = img.render(Colormap::Grey, (1.0, 2.0), Orientation::default());
        assert_eq!((w, h), (3, 1));
        assert_eq!(px, vec![0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 255]);
        let lut = colormap_lut(Colormap::Turbo);
        // Turbo runs from blue to dark red.
        assert!(lut[40][2] > lut[40][0] && lut[255][0] > lut[255][2]);
    }
}
