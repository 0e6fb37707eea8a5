//! Points out of `sensor_msgs/PointCloud2` (any field layout, either byte order, rows with
//! padding), `sensor_msgs/LaserScan` and `sensor_msgs/PointCloud`, in the sensor's frame, with
//! the values or colours they are painted by.

use super::read::{header, items, numbers, sub, text, vec3};
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};

/// Most points read from one message; the rest are left out and the note says so.
pub const MAX_POINTS: usize = 16_000_000;

/// What a cloud's points are painted by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Paint {
    /// One colour.
    #[default]
    Flat,
    /// A field's value through a colormap (`intensity`, `z`, ...).
    Field(String),
    /// The packed `rgb`/`rgba` field.
    Rgb,
}

/// The points of one message, in its frame.
#[derive(Debug, Clone, Default)]
pub struct Points {
    /// `header.frame_id`.
    pub frame: String,
    /// `header.stamp` (ns), if set.
    pub stamp: Option<u64>,
    /// Positions.
    pub xyz: Vec<[f32; 3]>,
    /// Per point the painting field's value (empty when painted otherwise).
    pub value: Vec<f32>,
    /// Per point its packed colour (empty unless painted by `rgb`).
    pub rgb: Vec<[u8; 4]>,
    /// The fields a cloud can be painted by.
    pub fields: Vec<String>,
    /// What was read ("12,000 of 12,000 points").
    pub note: String,
    /// Every other numeric field of the points (intensity, ring, time, a `PointCloud`'s
    /// channels), a value a point each: a scene paints by any of them without reading the
    /// message again.
    pub columns: Vec<(String, Vec<f32>)>,
    /// Each column's finite values' lowest and highest ([`Points::measure`]).
    pub column_ranges: Vec<Option<(f32, f32)>>,
    /// The finite values' lowest and highest ([`Points::measure`]).
    pub range: Option<(f32, f32)>,
    /// The box holding the points, in their frame ([`Points::measure`]).
    pub bounds: Option<([f32; 3], [f32; 3])>,
}

impl Points {
    /// Works out `range` and `bounds`, once, when the message is read: a scene then paints and
    /// frames its clouds without going over their points again.
    pub fn measure(&mut self) {
        let range = |v: &[f32]| {
            let (lo, hi) = v
                .iter()
                .filter(|v| v.is_finite())
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            (lo <= hi).then_some((lo, hi))
        };
        self.range = range(&self.value);
        self.column_ranges = self.columns.iter().map(|(_, v)| range(v)).collect();
        self.bounds =
            crate::geom::bounds_of(self.xyz.iter().filter(|p| p.iter().all(|c| c.is_finite())));
    }

    /// Bytes its arrays hold (what the cache of read clouds counts).
    pub fn bytes(&self) -> usize {
        self.xyz.len() * 12
            + self.value.len() * 4
            + self.rgb.len() * 4
            + self.columns.iter().map(|(_, v)| v.len() * 4).sum::<usize>()
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|(n, _)| n == name)
    }
}

/// PointField datatypes: size in bytes (1 INT8 ... 8 FLOAT64).
fn prim_size(datatype: u8) -> Option<usize> {
    Some(match datatype {
        1 | 2 => 1,
        3 | 4 => 2,
        5..=7 => 4,
        8 => 8,
        _ => return None,
    })
}

#[derive(Clone, Copy)]
struct Reader {
    offset: usize,
    datatype: u8,
    big: bool,
}

impl Reader {
    #[inline]
    fn bytes<const N: usize>(&self, p: &[u8]) -> [u8; N] {
        let mut b = [0u8; N];
        // Callers check that the field fits the point (offset + size <= step).
        if let Some(s) = p.get(self.offset..self.offset + N) {
            b.copy_from_slice(s);
        }
        if self.big {
            b.reverse();
        }
        b
    }

    #[inline]
    fn f32(&self, p: &[u8]) -> f32 {
        match self.datatype {
            1 => self.bytes::<1>(p)[0] as i8 as f32,
            2 => self.bytes::<1>(p)[0] as f32,
            3 => i16::from_le_bytes(self.bytes(p)) as f32,
            4 => u16::from_le_bytes(self.bytes(p)) as f32,
            5 => i32::from_le_bytes(self.bytes(p)) as f32,
            6 => u32::from_le_bytes(self.bytes(p)) as f32,
            7 => f32::from_le_bytes(self.bytes(p)),
            _ => f64::from_le_bytes(self.bytes(p)) as f32,
        }
    }

    #[inline]
    fn packed(&self, p: &[u8], alpha: bool) -> [u8; 4] {
        let v = u32::from_le_bytes(self.bytes(p));
        let a = if alpha { (v >> 24) as u8 } else { 255 };
        [(v >> 16) as u8, (v >> 8) as u8, v as u8, a]
    }
}

fn count_note(read: usize, claimed: usize, held: usize) -> String {
    let mut s = format!(
        "{} of {} points",
        crate::timefmt::thousands(read),
        crate::timefmt::thousands(claimed)
    );
    if held < claimed {
        s.push_str(&format!(
            " (the data holds {})",
            crate::timefmt::thousands(held)
        ));
    }
    s
}

/// How a cloud's points are laid out: each field's name, offset and ROS `PointField`
/// datatype; bytes a point, points a row, rows, bytes a row; byte order.
struct Layout {
    fields: Vec<(String, usize, u8)>,
    step: usize,
    width: usize,
    height: usize,
    row_step: usize,
    big: bool,
}

/// A `sensor_msgs/PointCloud2`, or Foxglove's `foxglove.PointCloud` (told apart by its
/// `point_stride`). A layout that does not fit its data (a field past the point, a row shorter
/// than its points, no x/y/z) is refused with what is wrong.
pub fn cloud2(def: &MsgDef, node: &Node, paint: &Paint) -> Result<Points, String> {
    let (frame, stamp) = header(def, node);
    let Some(Value::Bytes(data)) = sub(def, node, "data").map(|n| &n.value) else {
        return Err("no uint8[] data field".into());
    };
    if node.field(def, "point_stride").is_some() {
        return foxglove_cloud(def, node, data, paint, frame, stamp);
    }
    let step = node
        .number(def, "point_step")
        .ok_or("no point_step field")? as usize;
    let width = node.number(def, "width").ok_or("no width field")? as usize;
    let height = node.number(def, "height").ok_or("no height field")? as usize;
    let row_step = node.number(def, "row_step").unwrap_or(0.0) as usize;
    let big = node.number(def, "is_bigendian").unwrap_or(0.0) != 0.0;
    let mut fields = Vec::new();
    for f in items(def, node, "fields") {
        let name = text(def, f, "name").unwrap_or_default();
        let offset = f.number(def, "offset").ok_or("a field without an offset")? as usize;
        let dt = f
            .number(def, "datatype")
            .ok_or("a field without a datatype")?;
        if !(0.0..=255.0).contains(&dt) {
            return Err(format!("field {name}: unknown datatype {dt}"));
        }
        fields.push((name, offset, dt as u8));
    }
    let layout = Layout {
        fields,
        step,
        width,
        height,
        row_step,
        big,
    };
    read_points(&layout, data, paint, frame, stamp)
}

/// Foxglove's point cloud: fields typed 1 UINT8, 2 INT8, 3 UINT16, 4 INT16, 5 UINT32, 6 INT32,
/// 7 FLOAT32, 8 FLOAT64, little-endian, `point_stride` bytes a point, the points placed by the
/// cloud's `pose` in its frame.
fn foxglove_cloud(
    def: &MsgDef,
    node: &Node,
    data: &[u8],
    paint: &Paint,
    frame: String,
    stamp: Option<u64>,
) -> Result<Points, String> {
    let step = node.number(def, "point_stride").ok_or("no point_stride")? as usize;
    let mut fields = Vec::new();
    for f in items(def, node, "fields") {
        let name = text(def, f, "name").unwrap_or_default();
        let offset = f.number(def, "offset").unwrap_or(0.0) as usize;
        let ty = f.number(def, "type").unwrap_or(0.0);
        // The same sizes as ROS's PointField, the signed and unsigned codes swapped.
        let datatype = match ty as i64 {
            1 => 2,
            2 => 1,
            3 => 4,
            4 => 3,
            5 => 6,
            6 => 5,
            7 => 7,
            8 => 8,
            _ => return Err(format!("field {name}: unknown type {ty}")),
        };
        fields.push((name, offset, datatype));
    }
    let width = data.len().checked_div(step).unwrap_or(0);
    let layout = Layout {
        fields,
        step,
        width,
        height: 1,
        row_step: width * step,
        big: false,
    };
    let mut out = read_points(&layout, data, paint, frame, stamp)?;
    if let Some(p) = sub(def, node, "pose").and_then(|p| super::read::pose(def, p)) {
        if p != crate::geom::Pose::IDENTITY {
            for v in &mut out.xyz {
                let q = p.apply([f64::from(v[0]), f64::from(v[1]), f64::from(v[2])]);
                *v = [q[0] as f32, q[1] as f32, q[2] as f32];
            }
        }
    }
    Ok(out)
}

fn read_points(
    l: &Layout,
    data: &[u8],
    paint: &Paint,
    frame: String,
    stamp: Option<u64>,
) -> Result<Points, String> {
    let (step, width, height, big) = (l.step, l.width, l.height, l.big);
    if step == 0 {
        return Err("point_step is 0".into());
    }
    let mut names = Vec::new();
    let mut find = |want: &[&str]| -> Result<Option<(Reader, String)>, String> {
        let mut found = None;
        for (name, offset, datatype) in &l.fields {
            let size = prim_size(*datatype)
                .ok_or_else(|| format!("field {name}: unknown datatype {datatype}"))?;
            if offset.saturating_add(size) > step {
                return Err(format!(
                    "field {name} at byte {offset} ({size} bytes) does not fit a point of {step} bytes"
                ));
            }
            if want.is_empty() && !names.contains(name) {
                names.push(name.clone());
            }
            if found.is_none() && want.contains(&name.as_str()) {
                found = Some((
                    Reader {
                        offset: *offset,
                        datatype: *datatype,
                        big,
                    },
                    name.clone(),
                ));
            }
        }
        Ok(found)
    };
    find(&[])?;
    let (Some((x, _)), Some((y, _))) = (find(&["x"])?, find(&["y"])?) else {
        return Err("the cloud has no x and y fields".into());
    };
    let z = find(&["z"])?.map(|(r, _)| r);
    // Every other field (the colour aside) as a column, the first of a name only.
    let mut others: Vec<(String, Reader)> = Vec::new();
    for (name, offset, datatype) in &l.fields {
        if matches!(name.as_str(), "x" | "y" | "z" | "rgb" | "rgba")
            || others.iter().any(|(n, _)| n == name)
        {
            continue;
        }
        others.push((
            name.clone(),
            Reader {
                offset: *offset,
                datatype: *datatype,
                big,
            },
        ));
    }
    // A packed colour is read whatever the paint (a scene may paint by it later).
    let rgb = find(&["rgb", "rgba"])?;
    let painter = match paint {
        Paint::Flat | Paint::Rgb => None,
        Paint::Field(f) if f == "x" || f == "y" || f == "z" => None,
        Paint::Field(f) => find(&[f.as_str()])?,
    };
    let row_step = if height <= 1 && l.row_step == 0 {
        width * step
    } else {
        l.row_step
    };
    if height > 1 && row_step < width.saturating_mul(step) {
        return Err(format!(
            "row_step {row_step} is shorter than {width} points of {step} bytes"
        ));
    }
    let claimed = width.saturating_mul(height);
    let mut out = Points {
        frame,
        stamp,
        fields: names,
        ..Default::default()
    };
    if claimed == 0 {
        out.note = "0 points".into();
        return Ok(out);
    }
    let want = claimed.min(MAX_POINTS);
    out.xyz.reserve(want.min(data.len() / step));
    let mut columns: Vec<Vec<f32>> = others
        .iter()
        .map(|_| Vec::with_capacity(want.min(data.len() / step)))
        .collect();
    let axis = match paint {
        Paint::Field(f) if f == "x" => Some(0),
        Paint::Field(f) if f == "y" => Some(1),
        Paint::Field(f) if f == "z" => Some(2),
        _ => None,
    };
    let mut held = 0usize;
    'rows: for r in 0..height {
        let Some(row) = data.get(r.saturating_mul(row_step)..) else {
            break;
        };
        for p in row.chunks_exact(step).take(width) {
            held += 1;
            if out.xyz.len() >= want {
                continue;
            }
            let v = [x.f32(p), y.f32(p), z.map_or(0.0, |z| z.f32(p))];
            if !(v[0].is_finite() && v[1].is_finite() && v[2].is_finite()) {
                continue;
            }
            out.xyz.push(v);
            for ((_, r), c) in others.iter().zip(&mut columns) {
                c.push(r.f32(p));
            }
            if let Some((r, name)) = &rgb {
                out.rgb.push(r.packed(p, name == "rgba"));
            }
            match (&painter, axis) {
                (_, Some(a)) => out.value.push(v[a]),
                (Some((r, _)), _) => out.value.push(r.f32(p)),
                _ => {}
            }
        }
        if held >= claimed {
            break 'rows;
        }
    }
    out.note = count_note(out.xyz.len(), claimed, held);
    out.columns = others.into_iter().map(|(n, _)| n).zip(columns).collect();
    Ok(out)
}

/// A `sensor_msgs/LaserScan`: each finite return inside `[range_min, range_max]` at its angle,
/// valued by its intensity when the scan has them, else by its range.
pub fn scan(def: &MsgDef, node: &Node) -> Result<Points, String> {
    let (frame, stamp) = header(def, node);
    let a0 = node.number(def, "angle_min").ok_or("no angle_min field")?;
    let da = node
        .number(def, "angle_increment")
        .ok_or("no angle_increment field")?;
    let lo = node.number(def, "range_min").unwrap_or(0.0);
    let hi = node.number(def, "range_max").unwrap_or(f64::INFINITY);
    let ranges = numbers(def, node, "ranges");
    let intensities = numbers(def, node, "intensities");
    let by_intensity = intensities.len() == ranges.len() && !ranges.is_empty();
    let mut out = Points {
        frame,
        stamp,
        fields: vec!["range".into(), "intensity".into()],
        ..Default::default()
    };
    for (i, &r) in ranges.iter().enumerate() {
        if !r.is_finite() || r < lo || r > hi || r <= 0.0 {
            continue;
        }
        let a = a0 + da * i as f64;
        out.xyz
            .push([(r * a.cos()) as f32, (r * a.sin()) as f32, 0.0]);
        out.value.push(if by_intensity {
            intensities[i] as f32
        } else {
            r as f32
        });
    }
    out.note = format!("{} of {} returns", out.xyz.len(), ranges.len());
    out.columns = vec![("value".into(), out.value.clone())];
    Ok(out)
}

/// A `sensor_msgs/PointCloud` (points and named channels of values).
pub fn cloud1(def: &MsgDef, node: &Node, paint: &Paint) -> Result<Points, String> {
    let (frame, stamp) = header(def, node);
    let pts = items(def, node, "points");
    let channels = items(def, node, "channels");
    let mut out = Points {
        frame,
        stamp,
        ..Default::default()
    };
    let mut values = None;
    let mut all: Vec<(String, Vec<f64>)> = Vec::new();
    for c in channels {
        let name = text(def, c, "name").unwrap_or_default();
        let v = numbers(def, c, "values");
        if matches!(paint, Paint::Field(f) if *f == name) {
            values = Some(v.clone());
        }
        if !all.iter().any(|(n, _)| *n == name) {
            all.push((name.clone(), v));
        }
        out.fields.push(name);
    }
    let mut columns: Vec<Vec<f32>> = all.iter().map(|_| Vec::new()).collect();
    for (i, p) in pts.iter().take(MAX_POINTS).enumerate() {
        let Some(v) = vec3(def, p) else { continue };
        let v = [v[0] as f32, v[1] as f32, v[2] as f32];
        if !v.iter().all(|c| c.is_finite()) {
            continue;
        }
        out.xyz.push(v);
        for ((_, src), c) in all.iter().zip(&mut columns) {
            c.push(src.get(i).copied().unwrap_or(f64::NAN) as f32);
        }
        if let Some(vals) = &values {
            out.value
                .push(vals.get(i).copied().unwrap_or(f64::NAN) as f32);
        } else if let Paint::Field(f) = paint {
            match f.as_str() {
                "x" => out.value.push(v[0]),
                "y" => out.value.push(v[1]),
                "z" => out.value.push(v[2]),
                _ => {}
            }
        }
    }
    out.note = count_note(out.xyz.len(), pts.len(), pts.len());
    out.columns = all.into_iter().map(|(n, _)| n).zip(columns).collect();
    Ok(out)
}
