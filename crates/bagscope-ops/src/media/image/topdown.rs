//! Laser scans and point clouds seen from above, as images: `sensor_msgs/LaserScan` (each
//! return at its range and angle) and `sensor_msgs/PointCloud2` (x and y of every point with
//! finite coordinates, its pixel keeping the highest z). The sensor is at the middle, x to the
//! right and y up; the square spans the farthest return (at most [`MAX_HALF_M`]). Each pixel holds
//! the range (scan) or the height (cloud), or NaN where nothing fell, so the image panel draws
//! it through a colormap and reads back the value and the place under the cursor.

use crate::media::image::ImageError;
use crate::media::image::{Image, MapInfo, Pixels};
use bagscope_reader::definition::msg::{MsgDef, Primitive};
use bagscope_reader::encoding::{Node, Value};

/// Side of the image in pixels.
pub const SIZE: u32 = 400;

/// The farthest the view reaches from the sensor (m): beyond, points are left out.
pub const MAX_HALF_M: f64 = 200.0;

/// Most points read from one cloud (the rest are skipped, said in the encoding).
const MAX_POINTS: usize = 20_000_000;

/// What a top-down pixel holds: its name in the value under the cursor.
pub fn value_name(encoding: &str) -> &'static str {
    if encoding.starts_with("laser scan") {
        "range"
    } else {
        "z"
    }
}

/// Field `name` as a number, which the image needs.
fn num(def: &MsgDef, node: &Node, name: &str) -> Result<f64, ImageError> {
    node.number(def, name).ok_or_else(|| ImageError::Field {
        field: name.to_string(),
        reason: format!("no number field {name}"),
    })
}

/// Rasterises `(x, y, value)` points into a [`SIZE`]² image centred on the sensor, each point
/// `dot` pixels wide, a pixel keeping the largest value that fell on it.
fn raster(points: &[(f64, f64, f32)], dot: u32, encoding: String) -> Image {
    let far = points
        .iter()
        .map(|&(x, y, _)| x.abs().max(y.abs()))
        .filter(|d| *d <= MAX_HALF_M)
        .fold(0.0f64, f64::max);
    // A little room round the farthest point; 1 m when everything is at the sensor.
    let half = if far > 0.0 { far * 1.05 } else { 1.0 };
    let res = 2.0 * half / f64::from(SIZE);
    let n = SIZE as usize;
    let mut px = vec![f32::NAN; n * n];
    for &(x, y, v) in points {
        // NaN compares false: left out here, not drawn at the corner.
        if !(x.abs() <= half && y.abs() <= half) || v.is_nan() {
            continue;
        }
        let col = ((x + half) / res).floor() as i64;
        let row = ((half - y) / res).floor() as i64;
        for dy in 0..i64::from(dot) {
            for dx in 0..i64::from(dot) {
                let (c, r) = (col + dx - i64::from(dot / 2), row + dy - i64::from(dot / 2));
                if (0..n as i64).contains(&c) && (0..n as i64).contains(&r) {
                    let p = &mut px[r as usize * n + c as usize];
                    if p.is_nan() || v > *p {
                        *p = v;
                    }
                }
            }
        }
    }
    Image {
        width: SIZE,
        height: SIZE,
        encoding,
        pixels: Pixels::Points(px),
        map: Some(MapInfo {
            resolution: res,
            origin: (-half, -half),
            yaw: 0.0,
        }),
    }
}

/// A `sensor_msgs/LaserScan` from above: each finite return inside `[range_min, range_max]`.
pub fn scan(def: &MsgDef, node: &Node) -> Result<Image, ImageError> {
    let a0 = num(def, node, "angle_min")?;
    let da = num(def, node, "angle_increment")?;
    let (lo, hi) = (
        num(def, node, "range_min").unwrap_or(0.0),
        num(def, node, "range_max").unwrap_or(f64::INFINITY),
    );
    let ranges = node
        .field_value(def, "ranges")
        .ok_or_else(|| ImageError::Field {
            field: "ranges".into(),
            reason: "no ranges field".into(),
        })?;
    let count = ranges.len().unwrap_or(0);
    let mut pts = Vec::with_capacity(count);
    for i in 0..count {
        let Some(r) = ranges.element(i).and_then(|(v, _)| v.as_f64()) else {
            continue;
        };
        if !r.is_finite() || r < lo || r > hi || r <= 0.0 {
            continue;
        }
        let a = a0 + da * i as f64;
        pts.push((r * a.cos(), r * a.sin(), r as f32));
    }
    Ok(raster(
        &pts,
        3,
        format!("laser scan, {} of {count} returns", pts.len()),
    ))
}

/// How one coordinate of a point is stored.
#[derive(Clone, Copy)]
struct Coord {
    offset: usize,
    prim: Primitive,
}

impl Coord {
    fn read(&self, p: &[u8], big: bool) -> Option<f64> {
        let sz = self.prim.size()?;
        let b = p.get(self.offset..self.offset + sz)?;
        if big {
            let mut le = [0u8; 8];
            le[..sz].copy_from_slice(b);
            le[..sz].reverse();
            bagscope_reader::encoding::prim_value(self.prim, &le)?.as_f64()
        } else {
            bagscope_reader::encoding::prim_value(self.prim, b)?.as_f64()
        }
    }
}

/// PointField datatypes (1 INT8 ... 8 FLOAT64).
fn point_prim(datatype: u64) -> Option<Primitive> {
    Some(match datatype {
        1 => Primitive::I8,
        2 => Primitive::U8,
        3 => Primitive::I16,
        4 => Primitive::U16,
        5 => Primitive::I32,
        6 => Primitive::U32,
        7 => Primitive::F32,
        8 => Primitive::F64,
        _ => return None,
    })
}

/// A `sensor_msgs/PointCloud2` from above: x and y of each point, a pixel keeping the highest
/// z (0 for a cloud without z).
pub fn cloud(def: &MsgDef, node: &Node) -> Result<Image, ImageError> {
    let Some(Value::Array(fields)) = node.field_value(def, "fields") else {
        return Err(ImageError::Field {
            field: "fields".into(),
            reason: "no fields array".into(),
        });
    };
    let step = num(def, node, "point_step")? as usize;
    if step == 0 {
        return Err(ImageError::Field {
            field: "point_step".into(),
            reason: "point_step is 0".into(),
        });
    }
    let big = num(def, node, "is_bigendian").unwrap_or(0.0) != 0.0;
    let coord = |name: &str| -> Result<Option<Coord>, ImageError> {
        for f in fields {
            let is = matches!(f.field_value(def, "name"), Some(Value::String(s)) if s == name.as_bytes());
            if !is {
                continue;
            }
            let offset = num(def, f, "offset")? as usize;
            let dt = num(def, f, "datatype")? as u64;
            let prim = point_prim(dt)
                .ok_or_else(|| ImageError::Unsupported(format!("field {name}: datatype {dt}")))?;
            if offset + prim.size().unwrap_or(8) > step {
                return Err(ImageError::Size(format!(
                    "field {name} at byte {offset} does not fit a point of {step} bytes"
                )));
            }
            return Ok(Some(Coord { offset, prim }));
        }
        Ok(None)
    };
    let (Some(cx), Some(cy)) = (coord("x")?, coord("y")?) else {
        return Err(ImageError::Field {
            field: "fields".into(),
            reason: "no x and y fields".into(),
        });
    };
    let cz = coord("z")?;
    let Some(Value::Bytes(data)) = node.field_value(def, "data") else {
        return Err(ImageError::Field {
            field: "data".into(),
            reason: "no uint8[] data field".into(),
        });
    };
    let claimed = (num(def, node, "width")? * num(def, node, "height")?) as usize;
    let n = claimed.min(data.len() / step);
    let read = n.min(MAX_POINTS);
    let mut pts = Vec::with_capacity(read);
    for p in data.chunks_exact(step).take(read) {
        let (Some(x), Some(y)) = (cx.read(p, big), cy.read(p, big)) else {
            continue;
        };
        let z = cz.and_then(|c| c.read(p, big)).unwrap_or(0.0);
        if x.is_finite() && y.is_finite() && z.is_finite() {
            pts.push((x, y, z as f32));
        }
    }
    let mut enc = format!("point cloud, {} of {claimed} points", pts.len());
    if n < claimed {
        enc.push_str(&format!(" (data holds {n})"));
    }
    if read < n {
        enc.push_str(&format!(" (first {read} read)"));
    }
    let dot = if pts.len() > 20_000 { 1 } else { 2 };
    Ok(raster(&pts, dot, enc))
}
