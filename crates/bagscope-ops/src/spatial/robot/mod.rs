//! The robot model: a URDF (as `/robot_description` holds it, or a file) read into links with
//! their visual and collision geometry and joints with their kinematics; [`kinematics`] turns
//! joint values into the links' transforms, as robot_state_publisher does. A URDF is untrusted
//! input: its size, element count and depth are bounded, and every fault is an error that
//! names the element and the line.

use std::collections::HashMap;

use crate::geom::Pose;

pub mod description;
pub mod joint_states;
pub mod kinematics;
pub mod mesh;

use crate::xml::{self, El};

/// URDF text longer than this is refused.
pub const MAX_URDF_BYTES: usize = 16 << 20;

/// Reads the URDF file at `p` (bounded in size).
pub fn read_urdf_file(p: &std::path::Path) -> Result<Model, String> {
    use std::io::Read;
    let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut text = String::new();
    f.take(MAX_URDF_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", p.display()))?;
    if text.len() > MAX_URDF_BYTES {
        return Err(format!("{}: more than {MAX_URDF_BYTES} bytes", p.display()));
    }
    Model::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// A shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Geometry {
    /// Edge lengths (m).
    Box([f64; 3]),
    /// Along z, centred.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Length along z (m).
        length: f64,
    },
    /// A sphere of this radius (m).
    Sphere(f64),
    /// A mesh file (`package://`, `file://` or relative) and its scale.
    Mesh {
        /// The mesh file as the URDF names it (`package://`, `file://` or a path).
        filename: String,
        /// Its scale along x, y and z.
        scale: [f64; 3],
    },
}

/// A visual or collision element of a link.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Its pose in the link's frame.
    pub origin: Pose,
    /// What it is.
    pub geometry: Geometry,
    /// RGBA, from its material (named or inline).
    pub color: Option<[f32; 4]>,
}

/// A link.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Link {
    /// The link's name (a frame).
    pub name: String,
    /// What is drawn of it.
    pub visuals: Vec<Shape>,
    /// What collides of it.
    pub collisions: Vec<Shape>,
}

/// How a joint moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointKind {
    /// Turns about its axis within limits.
    Revolute,
    /// Turns about its axis without limits.
    Continuous,
    /// Slides along its axis.
    Prismatic,
    /// Does not move.
    Fixed,
    /// Six degrees of freedom: its pose comes from `/tf`, not joint states.
    Floating,
    /// Three degrees of freedom in a plane: likewise.
    Planar,
}

/// A joint that follows another: `multiplier × value + offset`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mimic {
    /// The joint whose value it follows.
    pub joint: String,
    /// Its value is that joint's times this...
    pub multiplier: f64,
    /// ...plus this.
    pub offset: f64,
}

/// A joint.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// The joint's name (as joint states name it).
    pub name: String,
    /// How it moves.
    pub kind: JointKind,
    /// The parent link.
    pub parent: String,
    /// The child link.
    pub child: String,
    /// The child's frame in the parent's at value 0.
    pub origin: Pose,
    /// Unit axis in the joint's frame.
    pub axis: [f64; 3],
    /// Lower and upper limits (revolute, prismatic).
    pub limits: Option<(f64, f64)>,
    /// Another joint whose value it follows, if any.
    pub mimic: Option<Mimic>,
}

/// A robot model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    /// The robot's name.
    pub name: String,
    /// Its links.
    pub links: Vec<Link>,
    /// Its joints.
    pub joints: Vec<Joint>,
}

/// Numbers separated by spaces, exactly `N` of them.
fn numbers<const N: usize>(s: &str, what: &str) -> Result<[f64; N], String> {
    let v: Vec<f64> = s
        .split_whitespace()
        .map(|x| {
            x.parse::<f64>()
                .map_err(|_| format!("{what}: {x:?} is not a number"))
        })
        .collect::<Result<_, _>>()?;
    let n = v.len();
    let a: [f64; N] = v
        .try_into()
        .map_err(|_| format!("{what}: {N} numbers expected, {n} given"))?;
    if a.iter().any(|x| !x.is_finite()) {
        return Err(format!("{what}: not finite"));
    }
    Ok(a)
}

/// The rotation of fixed-axis roll, pitch, yaw (about x, then y, then z), as URDF writes it.
pub fn rpy_quaternion([r, p, y]: [f64; 3]) -> [f64; 4] {
    let (sr, cr) = (r / 2.0).sin_cos();
    let (sp, cp) = (p / 2.0).sin_cos();
    let (sy, cy) = (y / 2.0).sin_cos();
    [
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ]
}

/// An `<origin xyz rpy>` child of `e`, or the identity.
fn origin(e: &El) -> Result<Pose, String> {
    let Some(o) = e.child("origin") else {
        return Ok(Pose::IDENTITY);
    };
    let t = o
        .attr("xyz")
        .map(|s| numbers::<3>(s, &format!("<origin xyz> at {}", o.at)))
        .transpose()?
        .unwrap_or([0.0; 3]);
    let rpy = o
        .attr("rpy")
        .map(|s| numbers::<3>(s, &format!("<origin rpy> at {}", o.at)))
        .transpose()?
        .unwrap_or([0.0; 3]);
    Ok(Pose {
        t,
        q: rpy_quaternion(rpy),
    })
}

fn positive(s: Option<&str>, what: &str) -> Result<f64, String> {
    let v = s
        .ok_or_else(|| format!("{what} missing"))?
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("{what} is not a number"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("{what} is not a length"));
    }
    Ok(v)
}

fn geometry(e: &El) -> Result<Geometry, String> {
    let g = e
        .child("geometry")
        .ok_or_else(|| format!("<{}> at {} has no <geometry>", e.name, e.at))?;
    let s = g
        .children
        .first()
        .ok_or_else(|| format!("<geometry> at {} is empty", g.at))?;
    let at = &s.at;
    Ok(match s.name.as_str() {
        "box" => Geometry::Box(numbers::<3>(
            s.attr("size")
                .ok_or_else(|| format!("<box> at {at} has no size"))?,
            &format!("<box size> at {at}"),
        )?),
        "cylinder" => Geometry::Cylinder {
            radius: positive(s.attr("radius"), &format!("<cylinder radius> at {at}"))?,
            length: positive(s.attr("length"), &format!("<cylinder length> at {at}"))?,
        },
        "sphere" => Geometry::Sphere(positive(
            s.attr("radius"),
            &format!("<sphere radius> at {at}"),
        )?),
        "mesh" => Geometry::Mesh {
            filename: s
                .attr("filename")
                .ok_or_else(|| format!("<mesh> at {at} has no filename"))?
                .to_string(),
            scale: s
                .attr("scale")
                .map(|v| numbers::<3>(v, &format!("<mesh scale> at {at}")))
                .transpose()?
                .unwrap_or([1.0; 3]),
        },
        other => return Err(format!("<{other}> at {at}: not a URDF geometry")),
    })
}

/// A `<material>`'s colour: its own `<color rgba>`, or the named one's.
fn material(e: &El, named: &HashMap<String, [f32; 4]>) -> Result<Option<[f32; 4]>, String> {
    let Some(m) = e.child("material") else {
        return Ok(None);
    };
    if let Some(c) = m.child("color").and_then(|c| c.attr("rgba")) {
        let v = numbers::<4>(c, &format!("<color rgba> at {}", m.at))?;
        return Ok(Some(v.map(|x| x.clamp(0.0, 1.0) as f32)));
    }
    Ok(m.attr("name").and_then(|n| named.get(n)).copied())
}

fn shapes(link: &El, tag: &str, named: &HashMap<String, [f32; 4]>) -> Result<Vec<Shape>, String> {
    link.children_named(tag)
        .map(|v| {
            Ok(Shape {
                origin: origin(v)?,
                geometry: geometry(v)?,
                color: material(v, named)?,
            })
        })
        .collect()
}

fn joint(e: &El) -> Result<Joint, String> {
    let at = &e.at;
    let name = e
        .attr("name")
        .ok_or_else(|| format!("<joint> at {at} has no name"))?
        .to_string();
    let kind = match e.attr("type") {
        Some("revolute") => JointKind::Revolute,
        Some("continuous") => JointKind::Continuous,
        Some("prismatic") => JointKind::Prismatic,
        Some("fixed") => JointKind::Fixed,
        Some("floating") => JointKind::Floating,
        Some("planar") => JointKind::Planar,
        Some(t) => {
            return Err(format!(
                "joint {name} at {at}: type {t:?} is not a URDF joint type"
            ))
        }
        None => return Err(format!("joint {name} at {at} has no type")),
    };
    let link = |tag: &str| {
        e.child(tag)
            .and_then(|p| p.attr("link"))
            .map(str::to_string)
            .ok_or_else(|| format!("joint {name} at {at} has no <{tag} link>"))
    };
    let axis = match e.child("axis").and_then(|a| a.attr("xyz")) {
        Some(s) => numbers::<3>(s, &format!("joint {name}'s <axis xyz>"))?,
        None => [1.0, 0.0, 0.0],
    };
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    if n < 1e-12
        && matches!(
            kind,
            JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic
        )
    {
        return Err(format!("joint {name} at {at}: its axis is zero"));
    }
    let axis = if n < 1e-12 {
        [1.0, 0.0, 0.0]
    } else {
        axis.map(|x| x / n)
    };
    let limits = e.child("limit").and_then(|l| {
        Some((
            l.attr("lower")?.trim().parse().ok()?,
            l.attr("upper")?.trim().parse().ok()?,
        ))
    });
    let mimic = match e.child("mimic") {
        Some(m) => Some(Mimic {
            joint: m
                .attr("joint")
                .ok_or_else(|| format!("joint {name}'s <mimic> names no joint"))?
                .to_string(),
            multiplier: m
                .attr("multiplier")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(1.0),
            offset: m
                .attr("offset")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0.0),
        }),
        None => None,
    };
    Ok(Joint {
        origin: origin(e)?,
        parent: link("parent")?,
        child: link("child")?,
        name,
        kind,
        axis,
        limits,
        mimic,
    })
}

impl Model {
    /// Reads a URDF. Checks what kinematics needs: every joint's links exist, no link has two
    /// parents, no joint mimics one that is not there.
    pub fn parse(text: &str) -> Result<Model, String> {
        if text.len() > MAX_URDF_BYTES {
            return Err(format!(
                "a URDF of {} bytes: more than {MAX_URDF_BYTES}",
                text.len()
            ));
        }
        let root = xml::parse(text)?;
        if root.name != "robot" {
            return Err(format!("the root element is <{}>, not <robot>", root.name));
        }
        let mut named = HashMap::new();
        for m in root.children_named("material") {
            if let (Some(n), Some(c)) = (
                m.attr("name"),
                m.child("color").and_then(|c| c.attr("rgba")),
            ) {
                let v = numbers::<4>(c, &format!("<color rgba> at {}", m.at))?;
                named.insert(n.to_string(), v.map(|x| x.clamp(0.0, 1.0) as f32));
            }
        }
        let mut model = Model {
            name: root.attr("name").unwrap_or("").to_string(),
            ..Model::default()
        };
        for l in root.children_named("link") {
            let name = l
                .attr("name")
                .ok_or_else(|| format!("<link> at {} has no name", l.at))?;
            if model.links.iter().any(|x| x.name == name) {
                return Err(format!("link {name} at {} is defined twice", l.at));
            }
            model.links.push(Link {
                name: name.to_string(),
                visuals: shapes(l, "visual", &named)?,
                collisions: shapes(l, "collision", &named)?,
            });
        }
        for j in root.children_named("joint") {
            model.joints.push(joint(j)?);
        }
        let mut parent_of: HashMap<&str, &str> = HashMap::new();
        for j in &model.joints {
            for l in [&j.parent, &j.child] {
                if !model.links.iter().any(|x| x.name == *l) {
                    return Err(format!(
                        "joint {} names link {l}, which is not defined",
                        j.name
                    ));
                }
            }
            if let Some(p) = parent_of.insert(&j.child, &j.parent) {
                return Err(format!(
                    "link {} has two parents ({p} and {})",
                    j.child, j.parent
                ));
            }
            if let Some(m) = &j.mimic {
                if !model.joints.iter().any(|x| x.name == m.joint) {
                    return Err(format!(
                        "joint {} mimics {}, which is not defined",
                        j.name, m.joint
                    ));
                }
            }
        }
        if model.root().is_none() && !model.links.is_empty() {
            return Err("every link has a parent: the joints make a loop".into());
        }
        Ok(model)
    }

    /// The root link: the one that is no joint's child (the first such).
    pub fn root(&self) -> Option<&str> {
        self.links
            .iter()
            .map(|l| l.name.as_str())
            .find(|l| !self.joints.iter().any(|j| j.child == *l))
    }
}

#[cfg(test)]
mod tests;
