//! The meshes of a robot's links: STL (binary and text), Wavefront OBJ (with its `.mtl`
//! colours) and COLLADA (DAE: triangles, polylists and polygons under the visual scene's node
//! transforms, in the file's unit, turned z up), read into triangles in metres with the colour
//! the file gives each part. Where a URDF's `filename` points is worked out by [`resolve`]. A
//! mesh is untrusted input: its size and triangle count are bounded and every fault is an error
//! that names the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::xml::{self, El};

/// A mesh file larger than this is refused.
pub const MAX_MESH_BYTES: u64 = 256 << 20;
/// A mesh of more triangles than this is refused.
pub const MAX_MESH_TRIANGLES: usize = 4_000_000;

/// Triangles of one colour (`None`: the file gives none, the URDF's material or a default
/// applies).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Part {
    /// RGBA in 0..1.
    pub color: Option<[f32; 4]>,
    /// Three corners each, in metres.
    pub tris: Vec<[[f32; 3]; 3]>,
}

/// A mesh: its parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mesh {
    /// Its parts, each of one colour.
    pub parts: Vec<Part>,
}

impl Mesh {
    /// Its triangles.
    pub fn triangles(&self) -> usize {
        self.parts.iter().map(|p| p.tris.len()).sum()
    }

    /// The box holding its corners.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        crate::geom::bounds_of(
            self.parts
                .iter()
                .flat_map(|p| p.tris.iter().flat_map(|t| t.iter())),
        )
    }

    fn push(&mut self, color: Option<[f32; 4]>, t: [[f32; 3]; 3]) -> Result<(), String> {
        if self.triangles() >= MAX_MESH_TRIANGLES {
            return Err(format!("more than {MAX_MESH_TRIANGLES} triangles"));
        }
        match self.parts.last_mut() {
            Some(p) if p.color == color => p.tris.push(t),
            _ => self.parts.push(Part {
                color,
                tris: vec![t],
            }),
        }
        Ok(())
    }
}

/// The file a URDF `filename` names: `package://PKG/rest` in a package directory found on
/// `search` (each entry a package's parent, a package itself, or an install prefix with
/// `share/PKG`), `file://` as the path it gives, anything else relative to `base` (the URDF's
/// directory) and then to each of `search`.
pub fn resolve(filename: &str, base: Option<&Path>, search: &[PathBuf]) -> Result<PathBuf, String> {
    if let Some(rest) = filename.strip_prefix("package://") {
        let (pkg, path) = rest.split_once('/').unwrap_or((rest, ""));
        for dir in search {
            for cand in [
                dir.join(pkg).join(path),
                dir.join("share").join(pkg).join(path),
            ] {
                if cand.is_file() {
                    return Ok(cand);
                }
            }
            if dir.file_name().is_some_and(|n| n == pkg) && dir.join(path).is_file() {
                return Ok(dir.join(path));
            }
        }
        return Err(format!(
            "{filename}: package {pkg} not found on the search path ({})",
            if search.is_empty() {
                "empty: give --msg-path, ROS_PACKAGE_PATH or AMENT_PREFIX_PATH".to_string()
            } else {
                search
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    if let Some(p) = filename.strip_prefix("file://") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{filename}: no such file"))
        };
    }
    let p = Path::new(filename);
    if p.is_absolute() {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("{filename}: no such file"))
        };
    }
    base.into_iter()
        .chain(search.iter().map(PathBuf::as_path))
        .map(|d| d.join(p))
        .find(|c| c.is_file())
        .ok_or_else(|| format!("{filename}: not found beside the URDF or on the search path"))
}

/// Reads the mesh at `path` (the kind by its extension, an STL also by its content).
pub fn load(path: &Path) -> Result<Mesh, String> {
    let name = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{name}: {e}"))?
        .len();
    if size > MAX_MESH_BYTES {
        return Err(format!(
            "{name}: {size} bytes, more than the {MAX_MESH_BYTES} a mesh may have"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let m = match ext.as_str() {
        "stl" => stl(&bytes),
        "obj" => obj(&String::from_utf8_lossy(&bytes), path.parent()),
        "dae" => dae(&String::from_utf8_lossy(&bytes)),
        _ => Err(format!(
            "a .{ext} mesh: bagscope reads STL, OBJ and COLLADA (.dae)"
        )),
    };
    m.map_err(|e| format!("{name}: {e}"))
}

/// An STL file: binary (a count and 50 bytes a triangle) or text (`facet … vertex x y z`).
pub fn stl(b: &[u8]) -> Result<Mesh, String> {
    let binary_count = b
        .get(80..84)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize);
    let mut m = Mesh::default();
    if let Some(n) =
        binary_count.filter(|&n| n.checked_mul(50).and_then(|x| x.checked_add(84)) == Some(b.len()))
    {
        for t in b[84..].chunks_exact(50) {
            let f = |i: usize| {
                let o = 12 + 4 * i;
                f32::from_le_bytes([t[o], t[o + 1], t[o + 2], t[o + 3]])
            };
            m.push(
                None,
                [[f(0), f(1), f(2)], [f(3), f(4), f(5)], [f(6), f(7), f(8)]],
            )?;
        }
        debug_assert_eq!(m.triangles(), n);
        return Ok(m);
    }
    let text = String::from_utf8_lossy(b);
    if !text.trim_start().starts_with("solid") {
        return Err(format!(
            "not an STL: {} bytes, neither text (`solid`) nor 84 + 50 × {} bytes",
            b.len(),
            binary_count.unwrap_or(0)
        ));
    }
    let mut corners: Vec<[f32; 3]> = Vec::with_capacity(3);
    let mut words = text.split_whitespace();
    while let Some(w) = words.next() {
        if w != "vertex" {
            continue;
        }
        let mut v = [0f32; 3];
        for c in &mut v {
            *c = words
                .next()
                .and_then(|x| x.parse().ok())
                .ok_or("a vertex without three numbers")?;
        }
        corners.push(v);
        if corners.len() == 3 {
            m.push(None, [corners[0], corners[1], corners[2]])?;
            corners.clear();
        }
    }
    if m.parts.is_empty() {
        return Err("an STL without a facet".into());
    }
    Ok(m)
}

/// A Wavefront OBJ: `v`, and `f` polygons (fanned into triangles; indexes from 1, negative from
/// the end, `v/vt/vn`), coloured by `usemtl` with the `Kd` of the `mtllib` beside it.
pub fn obj(text: &str, dir: Option<&Path>) -> Result<Mesh, String> {
    let mut v: Vec<[f32; 3]> = Vec::new();
    let mut m = Mesh::default();
    let mut colors: HashMap<String, [f32; 4]> = HashMap::new();
    let mut color = None;
    for (i, line) in text.lines().enumerate() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("v") => {
                let mut p = [0f32; 3];
                for c in &mut p {
                    *c = w
                        .next()
                        .and_then(|x| x.parse().ok())
                        .ok_or_else(|| format!("line {}: a vertex without three numbers", i + 1))?;
                }
                v.push(p);
            }
            Some("f") => {
                let idx: Vec<[f32; 3]> = w
                    .map(|x| {
                        let k: i64 = x
                            .split('/')
                            .next()
                            .and_then(|k| k.parse().ok())
                            .ok_or_else(|| format!("line {}: face index {x:?}", i + 1))?;
                        let at = if k < 0 { v.len() as i64 + k } else { k - 1 };
                        usize::try_from(at)
                            .ok()
                            .and_then(|a| v.get(a).copied())
                            .ok_or_else(|| {
                                format!("line {}: face index {k} of {} vertices", i + 1, v.len())
                            })
                    })
                    .collect::<Result<_, _>>()?;
                for k in 2..idx.len() {
                    m.push(color, [idx[0], idx[k - 1], idx[k]])?;
                }
            }
            Some("mtllib") => {
                if let (Some(d), Some(f)) = (dir, w.next()) {
                    // A missing or unreadable material library leaves the mesh uncoloured.
                    if let Ok(t) = std::fs::read_to_string(d.join(f)) {
                        colors.extend(mtl(&t));
                    }
                }
            }
            Some("usemtl") => color = w.next().and_then(|n| colors.get(n).copied()),
            _ => {}
        }
    }
    if m.parts.is_empty() {
        return Err("an OBJ without a face".into());
    }
    Ok(m)
}

/// The `Kd` (diffuse colour) and `d` (opacity) of each material of an `.mtl` file.
fn mtl(text: &str) -> HashMap<String, [f32; 4]> {
    let mut out = HashMap::new();
    let mut name = None;
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("newmtl") => name = w.next().map(str::to_string),
            Some("Kd") => {
                let c: Vec<f32> = w.filter_map(|x| x.parse().ok()).collect();
                if let (Some(n), [r, g, b, ..]) = (&name, c.as_slice()) {
                    out.insert(n.clone(), [*r, *g, *b, 1.0]);
                }
            }
            Some("d") => {
                if let (Some(n), Some(a)) = (&name, w.next().and_then(|x| x.parse().ok())) {
                    if let Some(c) = out.get_mut(n) {
                        c[3] = a;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A 4 × 4 row-major transform.
type M4 = [[f64; 4]; 4];

const IDENTITY: M4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

fn mul(a: &M4, b: &M4) -> M4 {
    let mut c = [[0.0; 4]; 4];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

fn apply(m: &M4, p: [f32; 3]) -> [f32; 3] {
    let p = [f64::from(p[0]), f64::from(p[1]), f64::from(p[2])];
    let r = |i: usize| (m[i][0] * p[0] + m[i][1] * p[1] + m[i][2] * p[2] + m[i][3]) as f32;
    [r(0), r(1), r(2)]
}

fn floats(s: &str) -> Vec<f64> {
    s.split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

/// A node's own transform: its `matrix`, `translate`, `rotate` and `scale` in order.
fn node_transform(n: &El) -> M4 {
    let mut m = IDENTITY;
    for c in &n.children {
        let v = floats(&c.text);
        let t = match (c.name.as_str(), v.as_slice()) {
            ("matrix", v) if v.len() == 16 => {
                let mut t = IDENTITY;
                for (i, row) in t.iter_mut().enumerate() {
                    row.copy_from_slice(&v[i * 4..i * 4 + 4]);
                }
                t
            }
            ("translate", [x, y, z]) => {
                let mut t = IDENTITY;
                t[0][3] = *x;
                t[1][3] = *y;
                t[2][3] = *z;
                t
            }
            ("scale", [x, y, z]) => {
                let mut t = IDENTITY;
                t[0][0] = *x;
                t[1][1] = *y;
                t[2][2] = *z;
                t
            }
            ("rotate", [x, y, z, deg]) => {
                let n = (x * x + y * y + z * z).sqrt();
                if n == 0.0 {
                    continue;
                }
                let (x, y, z) = (x / n, y / n, z / n);
                let (s, c) = deg.to_radians().sin_cos();
                let k = 1.0 - c;
                [
                    [c + x * x * k, x * y * k - z * s, x * z * k + y * s, 0.0],
                    [y * x * k + z * s, c + y * y * k, y * z * k - x * s, 0.0],
                    [z * x * k - y * s, z * y * k + x * s, c + z * z * k, 0.0],
                    [0.0, 0.0, 0.0, 1.0],
                ]
            }
            _ => continue,
        };
        m = mul(&m, &t);
    }
    m
}

/// Every element of the tree with an `id`, by it.
fn ids<'a>(e: &'a El, out: &mut HashMap<&'a str, &'a El>) {
    if let Some(id) = e.attr("id") {
        out.insert(id, e);
    }
    for c in &e.children {
        ids(c, out);
    }
}

/// A COLLADA document.
pub fn dae(text: &str) -> Result<Mesh, String> {
    let root = xml::parse(text)?;
    if root.name != "COLLADA" {
        return Err(format!("<{}>, not a COLLADA document", root.name));
    }
    let mut by_id = HashMap::new();
    ids(&root, &mut by_id);
    let asset = root.child("asset");
    let unit = asset
        .and_then(|a| a.child("unit"))
        .and_then(|u| u.attr("meter"))
        .and_then(|m| m.trim().parse::<f64>().ok())
        .filter(|m| m.is_finite() && *m > 0.0)
        .unwrap_or(1.0);
    let up = asset
        .and_then(|a| a.child("up_axis"))
        .map_or("Y_UP", |u| u.text.trim());
    // Into metres and z up (as ROS's tools turn a Y_UP or X_UP file).
    let mut top = IDENTITY;
    for (i, row) in top.iter_mut().enumerate().take(3) {
        row[i] = unit;
    }
    let turn: M4 = match up {
        "Y_UP" => [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, -1.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
        "X_UP" => [
            [0.0, -1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
        _ => IDENTITY,
    };
    let top = mul(&turn, &top);
    let doc = Dae { by_id: &by_id };
    let mut m = Mesh::default();
    let scene = root
        .child("scene")
        .and_then(|s| s.child("instance_visual_scene"))
        .and_then(|i| doc.target(i.attr("url")?))
        .or_else(|| {
            root.child("library_visual_scenes")
                .and_then(|l| l.child("visual_scene"))
        });
    match scene {
        Some(s) => {
            for n in s.children_named("node") {
                doc.node(n, &top, &mut m, 0)?;
            }
        }
        // No scene: every geometry as it is.
        None => {
            for g in root
                .children_named("library_geometries")
                .flat_map(|l| l.children_named("geometry"))
            {
                doc.geometry(g, &top, &HashMap::new(), &mut m)?;
            }
        }
    }
    if m.parts.is_empty() {
        return Err("a COLLADA document without a triangle".into());
    }
    Ok(m)
}

struct Dae<'a> {
    by_id: &'a HashMap<&'a str, &'a El>,
}

impl Dae<'_> {
    /// The element a `#id` URL names.
    fn target(&self, url: &str) -> Option<&El> {
        self.by_id.get(url.strip_prefix('#')?).copied()
    }

    fn node(&self, n: &El, parent: &M4, m: &mut Mesh, depth: usize) -> Result<(), String> {
        if depth > 64 {
            return Err(format!("nodes nested more than 64 deep at {}", n.at));
        }
        let here = mul(parent, &node_transform(n));
        for c in &n.children {
            match c.name.as_str() {
                "node" => self.node(c, &here, m, depth + 1)?,
                "instance_node" => {
                    if let Some(t) = c.attr("url").and_then(|u| self.target(u)) {
                        self.node(t, &here, m, depth + 1)?;
                    }
                }
                "instance_geometry" => {
                    let Some(g) = c.attr("url").and_then(|u| self.target(u)) else {
                        continue;
                    };
                    // Material symbols bound here to their materials' colours.
                    let mut colors = HashMap::new();
                    for im in c
                        .children_named("bind_material")
                        .flat_map(|b| b.children_named("technique_common"))
                        .flat_map(|t| t.children_named("instance_material"))
                    {
                        if let (Some(sym), Some(col)) = (
                            im.attr("symbol"),
                            im.attr("target").and_then(|t| self.material_color(t)),
                        ) {
                            colors.insert(sym.to_string(), col);
                        }
                    }
                    self.geometry(g, &here, &colors, m)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A material's diffuse colour.
    fn material_color(&self, url: &str) -> Option<[f32; 4]> {
        let mat = self.target(url)?;
        let effect = self.target(mat.child("instance_effect")?.attr("url")?)?;
        let tech = effect.child("profile_COMMON")?.child("technique")?;
        let shading = tech
            .children
            .iter()
            .find(|c| matches!(c.name.as_str(), "phong" | "lambert" | "blinn" | "constant"))?;
        let color = shading
            .child("diffuse")
            .or_else(|| shading.child("emission"))?
            .child("color")?;
        match floats(&color.text).as_slice() {
            [r, g, b, a] => Some([*r as f32, *g as f32, *b as f32, *a as f32]),
            [r, g, b] => Some([*r as f32, *g as f32, *b as f32, 1.0]),
            _ => None,
        }
    }

    /// The positions a `<source>` (through `<vertices>`) holds.
    fn positions(&self, url: &str) -> Result<Vec<[f32; 3]>, String> {
        let mut el = self
            .target(url)
            .ok_or_else(|| format!("{url}: no such element"))?;
        if el.name == "vertices" {
            let src = el
                .children_named("input")
                .find(|i| i.attr("semantic") == Some("POSITION"))
                .and_then(|i| i.attr("source"))
                .ok_or_else(|| format!("<vertices> at {} without a POSITION input", el.at))?;
            el = self
                .target(src)
                .ok_or_else(|| format!("{src}: no such source"))?;
        }
        let arr = el
            .child("float_array")
            .ok_or_else(|| format!("<source> at {} without a float_array", el.at))?;
        let stride = el
            .child("technique_common")
            .and_then(|t| t.child("accessor"))
            .and_then(|a| a.attr("stride"))
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(3)
            .max(3);
        Ok(floats(&arr.text)
            .chunks_exact(stride)
            .map(|c| [c[0] as f32, c[1] as f32, c[2] as f32])
            .collect())
    }

    fn geometry(
        &self,
        g: &El,
        at: &M4,
        colors: &HashMap<String, [f32; 4]>,
        m: &mut Mesh,
    ) -> Result<(), String> {
        let Some(mesh) = g.child("mesh") else {
            // Splines and convex meshes are not drawn.
            return Ok(());
        };
        for prim in &mesh.children {
            let kind = prim.name.as_str();
            if !matches!(kind, "triangles" | "polylist" | "polygons") {
                continue;
            }
            let inputs: Vec<&El> = prim.children_named("input").collect();
            let stride = inputs
                .iter()
                .filter_map(|i| i.attr("offset")?.parse::<usize>().ok())
                .max()
                .map_or(1, |o| o + 1);
            let Some(vertex) = inputs.iter().find(|i| i.attr("semantic") == Some("VERTEX")) else {
                return Err(format!("<{kind}> at {} without a VERTEX input", prim.at));
            };
            let offset: usize = vertex
                .attr("offset")
                .and_then(|o| o.parse().ok())
                .unwrap_or(0);
            let pos = self.positions(vertex.attr("source").unwrap_or(""))?;
            let color = prim.attr("material").and_then(|s| colors.get(s).copied());
            let corner = |k: f64| -> Result<[f32; 3], String> {
                let k = k as usize;
                pos.get(k).map(|p| apply(at, *p)).ok_or_else(|| {
                    format!(
                        "<{kind}> at {}: index {k} of {} positions",
                        prim.at,
                        pos.len()
                    )
                })
            };
            // Each polygon's corner indexes (the VERTEX input's of each `stride` group).
            let mut polygons: Vec<Vec<f64>> = Vec::new();
            match kind {
                "polygons" => {
                    for p in prim.children_named("p") {
                        let v = floats(&p.text);
                        polygons.push(v.iter().skip(offset).step_by(stride).copied().collect());
                    }
                }
                _ => {
                    let v: Vec<f64> = prim.child("p").map(|p| floats(&p.text)).unwrap_or_default();
                    let idx: Vec<f64> = v.iter().skip(offset).step_by(stride).copied().collect();
                    if kind == "triangles" {
                        polygons.extend(idx.chunks_exact(3).map(<[f64]>::to_vec));
                    } else {
                        let counts = prim
                            .child("vcount")
                            .map(|c| floats(&c.text))
                            .unwrap_or_default();
                        let mut i = 0usize;
                        for n in counts {
                            let n = n as usize;
                            let Some(poly) = idx.get(i..i + n) else {
                                return Err(format!(
                                    "<polylist> at {}: vcount runs past its indexes",
                                    prim.at
                                ));
                            };
                            polygons.push(poly.to_vec());
                            i += n;
                        }
                    }
                }
            }
            for poly in polygons {
                for k in 2..poly.len() {
                    m.push(
                        color,
                        [corner(poly[0])?, corner(poly[k - 1])?, corner(poly[k])?],
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_text_stl_read_alike() {
        let mut b = vec![0u8; 80];
        b.extend_from_slice(&1u32.to_le_bytes());
        for v in [0f32, 0.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&[0, 0]);
        let bin = stl(&b).unwrap();
        let text = stl(b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 1 2 3\nvertex 4 5 6\nvertex 7 8 9\nendloop\nendfacet\nendsolid x\n").unwrap();
        assert_eq!(bin, text);
        assert_eq!(bin.triangles(), 1);
        assert!(stl(&b[..100]).is_err());
    }

    #[test]
    fn obj_faces_are_fanned_and_indexed_from_either_end() {
        let m = obj("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1/1 2 3 -1\n", None).unwrap();
        assert_eq!(
            m.parts[0].tris,
            vec![
                [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]],
                [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
            ]
        );
        assert!(obj("v 0 0 0\nf 1 2 3\n", None)
            .unwrap_err()
            .contains("face index 2"));
    }

    #[test]
    fn collada_nodes_units_and_up_axis() {
        let doc = r##"<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
 <asset><unit meter="0.5"/><up_axis>Y_UP</up_axis></asset>
 <library_effects><effect id="red-fx"><profile_COMMON><technique sid="c"><lambert>
  <diffuse><color>1 0 0 1</color></diffuse></lambert></technique></profile_COMMON></effect></library_effects>
 <library_materials><material id="red"><instance_effect url="#red-fx"/></material></library_materials>
 <library_geometries><geometry id="g"><mesh>
  <source id="p"><float_array id="pa" count="9">0 0 0 1 0 0 0 1 0</float_array>
   <technique_common><accessor source="#pa" count="3" stride="3"/></technique_common></source>
  <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
  <triangles material="m" count="1"><input semantic="VERTEX" source="#v" offset="0"/>
   <input semantic="NORMAL" source="#n" offset="1"/><p>0 9 1 9 2 9</p></triangles>
 </mesh></geometry></library_geometries>
 <library_visual_scenes><visual_scene id="s"><node><translate>2 0 0</translate>
  <instance_geometry url="#g"><bind_material><technique_common>
   <instance_material symbol="m" target="#red"/></technique_common></bind_material></instance_geometry>
 </node></visual_scene></library_visual_scenes>
 <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"##;
        let m = dae(doc).unwrap();
        assert_eq!(m.parts.len(), 1);
        assert_eq!(m.parts[0].color, Some([1.0, 0.0, 0.0, 1.0]));
        // Half a metre a unit, moved 2 along x, y up turned to z up.
        assert_eq!(
            m.parts[0].tris,
            vec![[[1.0, 0.0, 0.0], [1.5, 0.0, 0.0], [1.0, 0.0, 0.5]]]
        );
    }
}
