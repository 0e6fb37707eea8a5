//! Images out of `sensor_msgs/Image` and `sensor_msgs/CompressedImage` messages (ROS 1 and
//! ROS 2): raw encodings (rgb8, rgba8, bgr8, bgra8, mono8, mono16, 8UC1/3/4, 16UC1, 16SC1,
//! 32FC1, bayer_*, yuv422), jpeg and png recognised from their bytes, and `compressedDepth`
//! (a 12-byte depth header, then png). An [`Image`] keeps each pixel's value, so a depth or
//! float image is drawn through a [`Colormap`] over a range the caller picks, and the value
//! under the cursor can be read back. A `nav_msgs/OccupancyGrid` is shown as a map: free
//! cells light, occupied dark, unknown ones blue-grey, +y up.

mod compressed;
mod error;
mod raw;
pub(crate) mod render;
pub use render::turbo;
pub mod topdown;

pub use compressed::{decode_compressed, encode_jpeg, encode_png, encode_png16, sniff, Compressed};
pub use error::ImageError;
pub use raw::decode_raw;
pub use render::colormap_lut;

use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Plan, Value};

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
    /// A scan's or cloud's points from above (see [`crate::media::image::topdown`]): range or height, NaN
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
    is_camera_type(datatype)
        || crate::media::video::is_video_type(datatype)
        || matches!(base, "OccupancyGrid" | "LaserScan" | "PointCloud2")
}

/// Whether a type is a camera's image (`Image`, `CompressedImage`, Foxglove's `RawImage` and
/// `CompressedImage`).
pub fn is_camera_type(datatype: &str) -> bool {
    let base = datatype.rsplit('/').next().unwrap_or(datatype);
    let base = base.strip_prefix("foxglove.").unwrap_or(base);
    matches!(base, "Image" | "CompressedImage" | "RawImage")
}

fn uint(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::U8(x) => Some(u64::from(*x)),
        Value::U16(x) => Some(u64::from(*x)),
        Value::U32(x) => Some(u64::from(*x)),
        Value::U64(x) => Some(*x),
        Value::I8(x) => u64::try_from(*x).ok(),
        Value::I16(x) => u64::try_from(*x).ok(),
        Value::I32(x) => u64::try_from(*x).ok(),
        // JSON's integers (Foxglove's schemas written as JSON).
        Value::I64(x) => u64::try_from(*x).ok(),
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
    if let (
        Some(info),
        Some(Value::Prims(bagscope_reader::definition::msg::Primitive::I8, cells)),
    ) = (node.field(def, "info"), node.field_value(def, "data"))
    {
        return occupancy_grid(def, info, cells);
    }
    if node.field(def, "angle_increment").is_some() && node.field(def, "ranges").is_some() {
        return crate::media::image::topdown::scan(def, node);
    }
    if node.field(def, "point_step").is_some() && node.field(def, "fields").is_some() {
        return crate::media::image::topdown::cloud(def, node);
    }
    let data = bytes(node.field_value(def, "data"))
        .ok_or_else(|| ImageError::field("data", "no uint8[] data field"))?;
    if let Some(format) = text(node.field_value(def, "format")) {
        return decode_compressed(&format, data);
    }
    let get = |n: &str| {
        uint(node.field_value(def, n)).ok_or_else(|| ImageError::field(n, format!("no {n} field")))
    };
    let width = u32::try_from(get("width")?)
        .map_err(|_| ImageError::field("width", "width out of range"))?;
    let height = u32::try_from(get("height")?)
        .map_err(|_| ImageError::field("height", "height out of range"))?;
    let step = get("step")?;
    let big = get("is_bigendian").unwrap_or(0) != 0;
    let encoding = text(node.field_value(def, "encoding"))
        .ok_or_else(|| ImageError::field("encoding", "no encoding field"))?;
    decode_raw(&encoding, width, height, step, big, data)
}

/// A `nav_msgs/OccupancyGrid`'s cells (`info.width` × `info.height`, row 0 at the map's origin)
/// as an image with its top row the grid's last, so that +y points up as in rviz.
fn occupancy_grid(def: &MsgDef, info: &Node, cells: &[u8]) -> Result<Image, ImageError> {
    let get = |n: &str| {
        uint(info.field_value(def, n))
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
