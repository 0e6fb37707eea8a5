//! The robot model in a scene: each link's visual (or collision) shapes, boxes, cylinders,
//! spheres and meshes, at the link's transform at the scene's time (from `/tf`, or computed
//! from the joint states by [`crate::spatial::tf::add_robot_frames`]), in the colours of the mesh file or the
//! URDF's materials. Meshes are read once and kept within a budget of triangles; a link
//! without a transform, a mesh that is missing or does not read, is named in the status and
//! the rest is drawn.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{MeshDraw, Pick, Rgba, Scene, Status, MAX_TRIANGLES};
use crate::geom::Affine32;
use crate::geom::Pose;
use crate::spatial::robot::mesh::{self, Mesh};
use crate::spatial::robot::{Geometry, Model};
use crate::timefmt::thousands;
use bagscope_reader::Bag;

/// A link's colour when neither the URDF nor the mesh gives one (RViz's default grey).
const DEFAULT: Rgba = [204, 204, 204, 255];

/// The robot a builder draws: its model and the meshes read so far.
pub(crate) struct Robot {
    model: Arc<Model>,
    /// Where it came from ("/robot_description", a file).
    from: String,
    /// Relative mesh paths are looked for here first (a URDF file's directory).
    base: Option<PathBuf>,
    search: Vec<PathBuf>,
    meshes: HashMap<String, Result<Arc<Mesh>, String>>,
    /// Triangles of the meshes kept.
    kept: usize,
    /// Meshes as the GPU takes them, by file, scale and colour: built once.
    drawn: HashMap<(String, [u64; 3], Rgba), Drawn>,
}

/// A mesh's corners, normals and colours, shared by every scene that draws it.
#[derive(Clone)]
struct Drawn {
    id: u64,
    pos: Arc<Vec<[f32; 3]>>,
    normal: Arc<Vec<[f32; 3]>>,
    color: Arc<Vec<Rgba>>,
}

/// The recording's robot (the URDF file `urdf` in its place): `None` without one; `Err` for
/// one that does not read.
pub(crate) fn load(bag: &Bag, urdf: Option<&Path>) -> Option<Result<Robot, String>> {
    let file = urdf.map(Path::to_path_buf);
    let got = crate::spatial::robot::description::robot_description(bag, urdf)?;
    Some(got.map(|(model, _)| {
        Robot {
            model: Arc::new(model),
            from: file
                .as_ref()
                .map_or("/robot_description".into(), |p| p.display().to_string()),
            base: file.and_then(|p| p.parent().map(PathBuf::from)),
            search: bagscope_reader::definition::sources::search_dirs(&bag.options().msg_path),
            meshes: HashMap::new(),
            kept: 0,
            drawn: HashMap::new(),
        }
    }))
}

fn rgba(c: [f32; 4]) -> Rgba {
    c.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
}

impl Robot {
    fn mesh(&mut self, filename: &str) -> Result<Arc<Mesh>, String> {
        if let Some(m) = self.meshes.get(filename) {
            return m.clone();
        }
        let m = mesh::resolve(filename, self.base.as_deref(), &self.search)
            .and_then(|p| mesh::load(&p))
            .and_then(|m| {
                if self.kept + m.triangles() > MAX_TRIANGLES {
                    Err(format!(
                        "{filename}: over the robot's budget of {} mesh triangles",
                        thousands(MAX_TRIANGLES)
                    ))
                } else {
                    self.kept += m.triangles();
                    Ok(Arc::new(m))
                }
            });
        self.meshes.insert(filename.to_string(), m.clone());
        m
    }

    /// `filename` scaled by `scale`, `color` where the file gives none, as the GPU takes it.
    fn drawn(&mut self, filename: &str, scale: [f64; 3], color: Rgba) -> Result<Drawn, String> {
        let key = (filename.to_string(), scale.map(f64::to_bits), color);
        if let Some(d) = self.drawn.get(&key) {
            return Ok(d.clone());
        }
        let m = self.mesh(filename)?;
        let n = m.triangles() * 3;
        let (mut pos, mut normal, mut col) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let s = scale.map(|v| v as f32);
        for part in &m.parts {
            let c = part.color.map_or(color, rgba);
            for t in &part.tris {
                let p = t.map(|v| [v[0] * s[0], v[1] * s[1], v[2] * s[2]]);
                let (a, b) = (
                    [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]],
                    [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]],
                );
                let nrm = [
                    a[1] * b[2] - a[2] * b[1],
                    a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0],
                ];
                pos.extend(p);
                normal.extend([nrm; 3]);
                col.extend([c; 3]);
            }
        }
        let id = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            ("robot mesh", &key).hash(&mut h);
            h.finish()
        };
        let d = Drawn {
            id,
            pos: Arc::new(pos),
            normal: Arc::new(normal),
            color: Arc::new(col),
        };
        self.drawn.insert(key, d.clone());
        Ok(d)
    }

    /// The model drawn.
    pub(crate) fn model(&self) -> &Model {
        &self.model
    }

    /// Draws the robot into `scene`, each link placed by `place` (its transform into the fixed
    /// frame `fixed` at the scene's time); its collision geometry where `collision`.
    pub(crate) fn draw(
        &mut self,
        scene: &mut Scene,
        (collision, fixed): (bool, &str),
        place: impl Fn(&str) -> Result<Pose, String>,
    ) -> Status {
        let mut st = Status {
            topic: self.from.clone(),
            ..Default::default()
        };
        let model = Arc::clone(&self.model);
        let t0 = scene.triangle_count();
        let (mut links, mut unplaced) = (0, Vec::new());
        'links: for link in &model.links {
            let shapes = if collision {
                &link.collisions
            } else {
                &link.visuals
            };
            if shapes.is_empty() {
                continue;
            }
            let pose = match place(&link.name) {
                Ok(p) => p,
                Err(_) => {
                    unplaced.push(link.name.clone());
                    continue;
                }
            };
            for shape in shapes {
                if scene.triangle_count() > MAX_TRIANGLES {
                    st.problems
                        .push(format!("only {links} links drawn: too many triangles"));
                    break 'links;
                }
                let at = pose.then(&shape.origin);
                let color = shape.color.map_or(DEFAULT, rgba);
                match &shape.geometry {
                    Geometry::Box(s) => scene.cube(&at, *s, color),
                    Geometry::Cylinder { radius, length } => {
                        scene.cylinder(&at, [2.0 * radius, 2.0 * radius, *length], color)
                    }
                    Geometry::Sphere(r) => scene.sphere(&at, [2.0 * r; 3], color),
                    Geometry::Mesh { filename, scale } => match self.drawn(filename, *scale, color)
                    {
                        // Kept on the GPU, placed by the link's pose.
                        Ok(d) => scene.meshes.push(MeshDraw {
                            id: d.id,
                            pos: d.pos,
                            normal: d.normal,
                            color: d.color,
                            pose: Affine32::new(&at).mat4(),
                        }),
                        Err(e) => {
                            if !st.problems.contains(&e) {
                                st.problems.push(e);
                            }
                        }
                    },
                }
            }
            scene.picks.push(Pick {
                pos: crate::geom::f32s(pose.t),
                what: format!("robot link {} in {fixed}", link.name),
                source: None,
            });
            links += 1;
        }
        if !unplaced.is_empty() {
            let n = unplaced.len();
            unplaced.truncate(5);
            st.problems.push(format!(
                "{n} links without a transform to {} at this time ({}{})",
                if fixed.is_empty() {
                    "the fixed frame"
                } else {
                    fixed
                },
                unplaced.join(", "),
                if n > 5 { ", …" } else { "" }
            ));
        }
        st.text = format!(
            "robot {}: {links} links, {} triangles",
            if model.name.is_empty() {
                "(unnamed)"
            } else {
                &model.name
            },
            thousands(scene.triangle_count() - t0)
        );
        st
    }
}
