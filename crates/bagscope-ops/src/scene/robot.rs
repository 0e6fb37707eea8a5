//! The robot model in a scene: each link's visual (or collision) shapes, boxes, cylinders,
//! spheres and meshes, at the link's transform at the scene's time (from `/tf`, or computed
//! from the joint states by [`crate::robot::states`]), in the colours of the mesh file or the
//! URDF's materials. Meshes are read once and kept within a budget of triangles; a link
//! without a transform, a mesh that is missing or does not read, is named in the status and
//! the rest is drawn.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::{thousands, Pick, Request, Rgba, Scene, Status, MAX_TRIANGLES};
use crate::robot::mesh::{self, Mesh};
use crate::robot::{Geometry, Model};
use crate::tf::Pose;
use bagscope_reader::Bag;

/// A link's colour when neither the URDF nor the mesh gives one (RViz's default grey).
const DEFAULT: Rgba = [204, 204, 204, 255];

/// The robot a builder draws: its model and the meshes read so far.
pub(super) struct Robot {
    model: Arc<Model>,
    /// Where it came from ("/robot_description", a file).
    from: String,
    /// Relative mesh paths are looked for here first (a URDF file's directory).
    base: Option<PathBuf>,
    search: Vec<PathBuf>,
    meshes: HashMap<String, Result<Arc<Mesh>, String>>,
    /// Triangles of the meshes kept.
    kept: usize,
}

/// The recording's robot: `None` without one; `Err` for one that does not read.
pub(super) fn load(bag: &Bag) -> Option<Result<Robot, String>> {
    let file = crate::robot::urdf_file();
    let got = crate::robot::states::robot_description(bag)?;
    Some(got.map(|(model, _)| {
        Robot {
            model: Arc::new(model),
            from: file
                .as_ref()
                .map_or("/robot_description".into(), |p| p.display().to_string()),
            base: file.and_then(|p| p.parent().map(PathBuf::from)),
            search: bagscope_reader::definition::sources::search_dirs(),
            meshes: HashMap::new(),
            kept: 0,
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

    /// Draws the robot into `scene`, each link placed by `place` (its transform into the fixed
    /// frame at the scene's time).
    pub(super) fn draw(
        &mut self,
        scene: &mut Scene,
        req: &Request,
        place: impl Fn(&str) -> Result<Pose, String>,
    ) -> Status {
        let mut st = Status {
            topic: self.from.clone(),
            ..Default::default()
        };
        let model = Arc::clone(&self.model);
        let t0 = scene.tri_pos.len() / 3;
        let (mut links, mut unplaced) = (0, Vec::new());
        'links: for link in &model.links {
            let shapes = if req.frames.collision {
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
                if scene.tri_pos.len() / 3 > MAX_TRIANGLES {
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
                    Geometry::Mesh { filename, scale } => match self.mesh(filename) {
                        Ok(m) => {
                            for part in &m.parts {
                                let c = part.color.map_or(color, rgba);
                                for tri in &part.tris {
                                    let p = |k: usize| {
                                        let v = tri[k];
                                        at.apply([
                                            f64::from(v[0]) * scale[0],
                                            f64::from(v[1]) * scale[1],
                                            f64::from(v[2]) * scale[2],
                                        ])
                                    };
                                    scene.triangle(p(0), p(1), p(2), c);
                                }
                            }
                        }
                        Err(e) => {
                            if !st.problems.contains(&e) {
                                st.problems.push(e);
                            }
                        }
                    },
                }
            }
            scene.picks.push(Pick {
                pos: super::shapes::f32s(pose.t),
                what: format!("robot link {} in {}", link.name, req.fixed),
                source: None,
            });
            links += 1;
        }
        if !unplaced.is_empty() {
            let n = unplaced.len();
            unplaced.truncate(5);
            st.problems.push(format!(
                "{n} links without a transform to {} at this time ({}{})",
                if req.fixed.is_empty() {
                    "the fixed frame"
                } else {
                    &req.fixed
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
            thousands(scene.tri_pos.len() / 3 - t0)
        );
        st
    }
}
