//! Markers straight from a `Marker`'s or `MarkerArray`'s bytes (ROS 1 and CDR), without the
//! value tree in between: each point, quaternion, colour, time, pose, header and marker is
//! made as its fields are decoded ([`Build`]), so a message of ten thousand markers allocates
//! little beyond the markers themselves. It answers only for the standard shapes of those
//! types (a point is exactly `x y z`, a colour `r g b a`, and so on); anything else is left to
//! [`super::markers::parse`] over the value tree, which it equals where it answers (the tests
//! check both on every marker message they write).

use super::markers::Marker;
use super::read::{quat_of, unit_to_u8};
use crate::geom::Pose;
use bagscope_reader::definition::msg::{MsgDef, Primitive};
use bagscope_reader::encoding::{Build, Plan, Value};

/// The markers of a message of `plan`, or `None` where its type is not a standard `Marker`
/// or `MarkerArray` or its bytes do not decode (the value tree's reader then says why).
pub fn markers(plan: &Plan, data: &[u8]) -> Option<Vec<Marker>> {
    let roles = Roles::of(&plan.def)?;
    let mut b = Parts { roles: &roles };
    match plan.decode_with(data, &mut b).ok()? {
        Part::Markers(v) => Some(v),
        Part::Marker(m) => Some(vec![*m]),
        _ => None,
    }
}

/// What a type is, told by its fields' names.
#[derive(Clone, Copy)]
enum Role {
    Vec3,
    Quat,
    Color,
    /// A ROS 2 `builtin_interfaces/Time` or `Duration`: `sec`, `nanosec`.
    Time,
    /// `position`, `orientation` (indices).
    Pose(usize, usize),
    /// `frame_id`, `stamp`.
    Header(usize, usize),
    Marker(MarkerFields),
    /// `markers`.
    Array(usize),
    Other,
}

/// Where each field of a `Marker` is.
#[derive(Clone, Copy)]
struct MarkerFields {
    header: usize,
    ns: usize,
    id: usize,
    kind: usize,
    action: usize,
    pose: usize,
    scale: usize,
    color: usize,
    lifetime: usize,
    frame_locked: usize,
    points: usize,
    colors: usize,
    text: usize,
}

struct Roles(Vec<Role>);

impl Roles {
    /// Each type's role; `None` where the message's own type is neither a marker nor an array
    /// of them.
    fn of(def: &MsgDef) -> Option<Roles> {
        let roles: Vec<Role> = def
            .types
            .iter()
            .map(|t| {
                let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
                let at = |n: &str| names.iter().position(|x| *x == n);
                // Exactly these fields in the standard order: `nums` reads them so.
                let plain: [(&[&str], Role); 4] = [
                    (&["x", "y", "z"], Role::Vec3),
                    (&["x", "y", "z", "w"], Role::Quat),
                    (&["r", "g", "b", "a"], Role::Color),
                    (&["sec", "nanosec"], Role::Time),
                ];
                if let Some((_, role)) = plain.iter().find(|(want, _)| names == *want) {
                    return *role;
                }
                if let (true, Some(p), Some(o)) =
                    (names.len() == 2, at("position"), at("orientation"))
                {
                    return Role::Pose(p, o);
                }
                if let (Some(f), Some(s)) = (at("frame_id"), at("stamp")) {
                    return Role::Header(f, s);
                }
                let m = (|| {
                    Some(MarkerFields {
                        header: at("header")?,
                        ns: at("ns")?,
                        id: at("id")?,
                        kind: at("type")?,
                        action: at("action")?,
                        pose: at("pose")?,
                        scale: at("scale")?,
                        color: at("color")?,
                        lifetime: at("lifetime")?,
                        frame_locked: at("frame_locked")?,
                        points: at("points")?,
                        colors: at("colors")?,
                        text: at("text")?,
                    })
                })();
                if let Some(m) = m {
                    return Role::Marker(m);
                }
                match (names.len(), at("markers")) {
                    (1, Some(i)) => Role::Array(i),
                    _ => Role::Other,
                }
            })
            .collect();
        matches!(roles.first(), Some(Role::Marker(_) | Role::Array(_))).then_some(Roles(roles))
    }
}

/// A decoded part of a marker message.
enum Part {
    Num(f64),
    Text(String),
    Nanos(i128),
    V3([f64; 3]),
    Quat([f64; 4]),
    Color([u8; 4]),
    /// A pose (`None`: not finite, which a marker takes as the identity).
    Pose(Option<Pose>),
    /// `frame_id` (no leading `/`), `stamp` (ns; `None` when zero).
    Header(String, Option<u64>),
    Marker(Box<Marker>),
    Markers(Vec<Marker>),
    List(Vec<Part>),
    /// What a marker does not read.
    Other,
    /// A part of a standard shape that is not as it should be: the whole message goes to the
    /// value tree's reader.
    Odd,
}

struct Parts<'a> {
    roles: &'a Roles,
}

impl Part {
    fn num(&self) -> Option<f64> {
        match self {
            Part::Num(v) => Some(*v),
            _ => None,
        }
    }

    fn nanos(&self) -> Option<i128> {
        match self {
            Part::Nanos(v) => Some(*v),
            _ => None,
        }
    }
}

/// A list's items, each what `item` makes of it (`None` where one is not).
fn list<T>(p: Part, item: impl Fn(Part) -> Option<T>) -> Option<Vec<T>> {
    match p {
        Part::List(v) => v.into_iter().map(item).collect(),
        _ => None,
    }
}

/// The numbers of a message's fields, in the order of `names` as the type lists them.
fn nums<const N: usize>(fields: &[Part]) -> Option<[f64; N]> {
    let mut out = [0.0; N];
    for (o, f) in out.iter_mut().zip(fields) {
        *o = f.num()?;
    }
    Some(out)
}

impl Parts<'_> {
    fn marker(&self, f: &MarkerFields, mut fields: Vec<Part>) -> Option<Marker> {
        let mut take = |i: usize| fields.get_mut(i).map(|p| std::mem::replace(p, Part::Other));
        let (frame, stamp) = match take(f.header)? {
            Part::Header(frame, stamp) => (frame, stamp),
            _ => return None,
        };
        let text = |p: Part| match p {
            Part::Text(s) => Some(s),
            _ => None,
        };
        let ns = text(take(f.ns)?)?;
        let id = take(f.id)?.num()? as i64;
        let kind = take(f.kind)?.num()? as i64;
        let action = take(f.action)?.num()? as i64;
        let pose = match take(f.pose)? {
            Part::Pose(p) => p.unwrap_or(Pose::IDENTITY),
            _ => return None,
        };
        let scale = match take(f.scale)? {
            Part::V3(v) => v,
            _ => return None,
        };
        let color = match take(f.color)? {
            Part::Color(c) => c,
            _ => return None,
        };
        let lifetime_ns = take(f.lifetime)?.nanos()?;
        let frame_locked = take(f.frame_locked)?.num()? != 0.0;
        let points = list(take(f.points)?, |p| match p {
            Part::V3(v) => Some(v),
            _ => None,
        })?;
        let colors = list(take(f.colors)?, |p| match p {
            Part::Color(c) => Some(c),
            _ => None,
        })?;
        let text = text(take(f.text)?)?;
        Some(Marker {
            ns,
            id,
            kind,
            action,
            frame,
            stamp,
            pose,
            scale,
            color,
            lifetime_ns,
            frame_locked,
            points,
            colors,
            text,
        })
    }
}

impl Build for Parts<'_> {
    type Out = Part;

    fn prim(&mut self, value: Value, _: u32, _: u32) -> Part {
        match value {
            Value::Time { sec, nsec } => {
                Part::Nanos(i128::from(sec) * 1_000_000_000 + i128::from(nsec))
            }
            Value::Duration { sec, nsec } => {
                Part::Nanos(i128::from(sec) * 1_000_000_000 + i128::from(nsec))
            }
            v => v.as_f64().map_or(Part::Other, Part::Num),
        }
    }

    fn string(&mut self, bytes: &[u8], _: u32, _: u32) -> Part {
        Part::Text(String::from_utf8_lossy(bytes).into_owned())
    }

    fn bytes(&mut self, _: &[u8], _: u32, _: u32) -> Part {
        Part::Other
    }

    fn prims(&mut self, _: Primitive, _: &[u8], _: u32, _: u32) -> Part {
        Part::Other
    }

    fn array(&mut self, items: Vec<Part>, _: u32, _: u32) -> Part {
        if items.iter().all(|p| matches!(p, Part::Marker(_))) && !items.is_empty() {
            return Part::Markers(
                items
                    .into_iter()
                    .filter_map(|p| match p {
                        Part::Marker(m) => Some(*m),
                        _ => None,
                    })
                    .collect(),
            );
        }
        Part::List(items)
    }

    fn message(&mut self, ty: usize, fields: Vec<Part>, _: u32, _: u32) -> Part {
        let Some(role) = self.roles.0.get(ty).copied() else {
            return Part::Odd;
        };
        let odd = |o: Option<Part>| o.unwrap_or(Part::Odd);
        match role {
            Role::Vec3 => odd(nums::<3>(&fields).map(Part::V3)),
            Role::Quat => odd(nums::<4>(&fields).map(|q| Part::Quat(quat_of(q)))),
            Role::Color => odd(nums::<4>(&fields).map(|c| Part::Color(c.map(unit_to_u8)))),
            Role::Time => {
                odd(nums::<2>(&fields)
                    .map(|[s, n]| Part::Nanos(s as i128 * 1_000_000_000 + n as i128)))
            }
            Role::Pose(p, o) => match (fields.get(p), fields.get(o)) {
                (Some(Part::V3(t)), Some(Part::Quat(q))) => Part::Pose(
                    t.iter()
                        .all(|v| v.is_finite())
                        .then_some(Pose { t: *t, q: *q }),
                ),
                _ => Part::Odd,
            },
            Role::Header(f, s) => match (fields.get(f), fields.get(s)) {
                (Some(Part::Text(frame)), Some(Part::Nanos(n))) => Part::Header(
                    frame.trim_start_matches('/').to_string(),
                    u64::try_from(*n).ok().filter(|&n| n > 0),
                ),
                _ => Part::Odd,
            },
            Role::Marker(f) => odd(self.marker(&f, fields).map(|m| Part::Marker(Box::new(m)))),
            Role::Array(i) => match fields.into_iter().nth(i) {
                Some(Part::Markers(v)) => Part::Markers(v),
                Some(Part::List(v)) if v.is_empty() => Part::Markers(Vec::new()),
                _ => Part::Odd,
            },
            Role::Other => Part::Other,
        }
    }
}
