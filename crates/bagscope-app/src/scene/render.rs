//! Drawing a [`Scene`] with the GPU through eframe's own GL context: three-d wraps glow's calls
//! in safe functions, so none of this is `unsafe`. Points are instanced quads (round, a size in
//! pixels or metres), lines instanced quads a pixel or a marker's width wide, triangles as they
//! are, boxes, spheres, cylinders and cones as instances of unit shapes kept on the GPU. The UI
//! thread only uploads what the worker built ([`Renderer::upload`]) and draws it.

use std::collections::HashMap;
use std::sync::Arc;

use three_d::{
    Blend, ClearState, Context, Cull, DepthTest, DepthTexture2D, InstanceBuffer, Interpolation,
    Program, RenderStates, RenderTarget, ScissorBox, Texture2D, VertexBuffer, Viewport, Wrapping,
    WriteMask,
};

use bagscope_ops::spatial::scene::{CloudDraw, CloudPaint, Scene, Shape, Solid, Values};

const POINT_VS: &str = r#"
uniform mat4 viewProj;
uniform vec2 viewport;
uniform float size;
uniform float metres;
uniform float pxPerM;
in vec2 corner;
in vec3 pos;
in uvec4 color;
out vec4 col;
out vec2 uv;
void main() {
    vec4 c = viewProj * vec4(pos, 1.0);
    float px = metres > 0.5 ? max(size * pxPerM / max(c.w, 1e-6), 1.0) : size;
    c.xy += corner * px / viewport * c.w;
    gl_Position = c;
    col = vec4(color) / 255.0;
    uv = corner;
}
"#;

/// A cloud's points, placed by its pose and coloured here: `PAINT` 0 one colour, 1 the packed
/// colour attribute, 2 a value attribute (a column: intensity, ring...) and 3 a coordinate of
/// the point in its own frame (`axis`), both through turbo over the layer's range (the
/// polynomial of `bagscope_ops::media::image::render::turbo`); a value that is not finite in the flat
/// colour.
const CLOUD_VS: &str = r#"
uniform mat4 viewProj;
uniform mat4 model;
uniform vec2 viewport;
uniform float size;
uniform vec4 flatColor;
uniform vec2 range;
uniform float axis;
in vec2 corner;
in vec3 pos;
#if PAINT == 1
in uvec4 color;
#elif PAINT == 2
in float value;
#endif
out vec4 col;
out vec2 uv;
vec3 turbo(float x) {
    x = clamp(x, 0.0, 1.0);
    float x2 = x * x, x3 = x2 * x, x4 = x3 * x, x5 = x4 * x;
    return clamp(vec3(
        0.13572138 + 4.6153926 * x - 42.660324 * x2 + 132.13108 * x3 - 152.9424 * x4 + 59.28638 * x5,
        0.09140261 + 2.1941884 * x + 4.8429666 * x2 - 14.185033 * x3 + 4.2772986 * x4 + 2.829566 * x5,
        0.1066733 + 12.641946 * x - 60.58205 * x2 + 110.36277 * x3 - 89.90311 * x4 + 27.34825 * x5
    ), 0.0, 1.0);
}
void main() {
    vec4 c = viewProj * model * vec4(pos, 1.0);
    c.xy += corner * size / viewport * c.w;
    gl_Position = c;
#if PAINT == 1
    col = vec4(color) / 255.0;
#elif PAINT >= 2
#if PAINT == 3
    float value = axis < 0.5 ? pos.x : (axis < 1.5 ? pos.y : pos.z);
#endif
    float span = range.y > range.x ? range.y - range.x : 1.0;
    // Not finite (NaN or infinite): the flat colour.
    bool finite = value == value && abs(value) <= 3.4e38;
    col = finite ? vec4(turbo((value - range.x) / span), 1.0) : flatColor;
#else
    col = flatColor;
#endif
    uv = corner;
}
"#;

const POINT_FS: &str = r#"
in vec4 col;
in vec2 uv;
layout (location = 0) out vec4 outColor;
void main() {
    if (dot(uv, uv) > 1.0) discard;
    outColor = col;
}
"#;

const LINE_VS: &str = r#"
uniform mat4 viewProj;
uniform vec2 viewport;
uniform float pxPerM;
in vec2 corner;
in vec3 a;
in vec3 b;
in uvec4 color;
in float width;
out vec4 col;
void main() {
    vec4 ca = viewProj * vec4(a, 1.0);
    vec4 cb = viewProj * vec4(b, 1.0);
    const float eps = 1e-4;
    // A segment crossing the camera's plane is cut there.
    if (ca.w < eps && cb.w < eps) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        col = vec4(0.0);
        return;
    }
    if (ca.w < eps) ca = mix(ca, cb, (eps - ca.w) / (cb.w - ca.w));
    if (cb.w < eps) cb = mix(cb, ca, (eps - cb.w) / (ca.w - cb.w));
    vec2 sa = ca.xy / ca.w * viewport;
    vec2 sb = cb.xy / cb.w * viewport;
    vec2 d = sb - sa;
    d = length(d) > 1e-6 ? normalize(d) : vec2(1.0, 0.0);
    vec2 n = vec2(-d.y, d.x);
    vec4 c = corner.x < 0.5 ? ca : cb;
    float px = (width > 0.0 ? max(width * pxPerM / c.w, 1.5) : 1.5) * 0.5;
    c.xy += n * corner.y * px / viewport * c.w;
    gl_Position = c;
    col = vec4(color) / 255.0;
}
"#;

const PLAIN_FS: &str = r#"
in vec4 col;
layout (location = 0) out vec4 outColor;
void main() {
    outColor = col;
}
"#;

const TRI_VS: &str = r#"
uniform mat4 viewProj;
in vec3 pos;
in uvec4 color;
out vec4 col;
void main() {
    gl_Position = viewProj * vec4(pos, 1.0);
    col = vec4(color) / 255.0;
}
"#;

/// A mesh placed by its pose and lit by its normal turned into the fixed frame, as
/// `bagscope_ops::spatial::scene::Scene::triangle` lights a triangle on the CPU (the same light, the same
/// 0.55 + 0.45 |n · l|).
const MESH_VS: &str = r#"
uniform mat4 viewProj;
uniform mat4 model;
in vec3 pos;
in vec3 normal;
in uvec4 color;
out vec4 col;
void main() {
    gl_Position = viewProj * model * vec4(pos, 1.0);
    vec3 n = mat3(model) * normal;
    float len = length(n);
    float d = len > 0.0 ? abs(dot(n / len, vec3(0.32, 0.45, 0.83))) : 1.0;
    vec4 c = vec4(color) / 255.0;
    col = vec4(c.rgb * (0.55 + 0.45 * d), c.a);
}
"#;

/// Solids: a unit shape's corners and normals, once, and per instance its axes, centre and
/// colour, lit as [`MESH_VS`] lights a mesh (the normal turned by the axes' cofactor matrix,
/// right for scaled shapes too; `bagscope_ops::spatial::scene::Solid::lit` on the CPU).
const SOLID_VS: &str = r#"
uniform mat4 viewProj;
in vec3 pos;
in vec3 normal;
in vec3 ax;
in vec3 ay;
in vec3 az;
in vec3 origin;
in uvec4 color;
out vec4 col;
void main() {
    vec3 p = ax * pos.x + ay * pos.y + az * pos.z + origin;
    gl_Position = viewProj * vec4(p, 1.0);
    vec3 n = cross(ay, az) * normal.x + cross(az, ax) * normal.y + cross(ax, ay) * normal.z;
    float len = length(n);
    float d = len > 0.0 ? abs(dot(n / len, vec3(0.32, 0.45, 0.83))) : 1.0;
    vec4 c = vec4(color) / 255.0;
    col = vec4(c.rgb * (0.55 + 0.45 * d), c.a);
}
"#;

/// A point set on the GPU: positions, colours, size, whether in metres, count.
type PointBuffers = (
    InstanceBuffer<[f32; 3]>,
    InstanceBuffer<[u8; 4]>,
    f32,
    bool,
    u32,
);
/// Triangles on the GPU: corners, colours, count.
type TriBuffers = (VertexBuffer<[f32; 3]>, VertexBuffer<[u8; 4]>, u32);

/// One cloud's points on the GPU, uploaded once for as long as scenes hold it.
pub struct CloudBuffers {
    pos: InstanceBuffer<[f32; 3]>,
    color: Option<InstanceBuffer<[u8; 4]>>,
    n: u32,
}

/// A mesh's corners on the GPU, uploaded once for as long as scenes hold it.
pub struct MeshBuffers {
    pos: VertexBuffer<[f32; 3]>,
    normal: VertexBuffer<[f32; 3]>,
    color: VertexBuffer<[u8; 4]>,
    n: u32,
}

/// A unit shape's corners and normals on the GPU, made once.
struct UnitBuffers {
    pos: VertexBuffer<[f32; 3]>,
    normal: VertexBuffer<[f32; 3]>,
    n: u32,
}

/// One shape's solids on the GPU: each instance's axes, centre and colour.
struct SolidBuffers {
    shape: usize,
    axes: [InstanceBuffer<[f32; 3]>; 4],
    color: InstanceBuffer<[u8; 4]>,
    n: u32,
}

/// The clouds and meshes on the GPU by [`CloudDraw::id`] and
/// [`bagscope_ops::spatial::scene::MeshDraw::id`]: a scene uploads only those the last one did not have,
/// and those it no longer holds are let go ([`CloudCache::keep_only`]).
#[derive(Default)]
pub struct CloudCache {
    by_id: HashMap<u64, Arc<CloudBuffers>>,
    /// A cloud's column of values, uploaded when it is first painted by it.
    values: HashMap<(u64, usize), Arc<InstanceBuffer<f32>>>,
    /// Meshes (the robot's links) by [`bagscope_ops::spatial::scene::MeshDraw::id`].
    meshes: HashMap<u64, Arc<MeshBuffers>>,
    /// Points uploaded since made (what the tests and the benchmark read).
    pub uploaded_points: u64,
    /// Mesh corners uploaded since made.
    pub uploaded_corners: u64,
}

impl CloudCache {
    /// Lets go of every cloud but those of `ids`.
    pub fn keep_only(&mut self, ids: &std::collections::HashSet<u64>) {
        self.by_id.retain(|id, _| ids.contains(id));
        self.values.retain(|(id, _), _| ids.contains(id));
        self.meshes.retain(|id, _| ids.contains(id));
    }

    /// How many clouds are on the GPU.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// None are.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// A cloud of a scene on the GPU: its points, the values it is painted by, how it is drawn.
struct CloudGpu {
    buffers: Arc<CloudBuffers>,
    values: Option<Arc<InstanceBuffer<f32>>>,
    draw: CloudDraw,
}

/// A scene's buffers on the GPU.
pub struct Gpu {
    points: Vec<PointBuffers>,
    clouds: Vec<CloudGpu>,
    meshes: Vec<(Arc<MeshBuffers>, [[f32; 4]; 4])>,
    solids: Vec<SolidBuffers>,
    lines: Option<LineBuffers>,
    tris: Option<TriBuffers>,
}

struct LineBuffers {
    a: InstanceBuffer<[f32; 3]>,
    b: InstanceBuffer<[f32; 3]>,
    color: InstanceBuffer<[u8; 4]>,
    width: InstanceBuffer<f32>,
    n: u32,
}

/// How the scene is seen: the view-projection matrix (column major) and how many pixels a
/// metre at `w = 1` spans.
#[derive(Debug, Clone, Copy)]
pub struct View {
    /// Projection × view.
    pub view_proj: [[f32; 4]; 4],
    /// Pixels per metre at clip `w = 1` (the focal length in pixels for a perspective view).
    pub px_per_m: f32,
    /// The background, or `None` to keep what is there.
    pub clear: Option<[f32; 4]>,
}

/// The programs and the shared quad, made once per GL context.
pub struct Renderer {
    ctx: Context,
    point: Program,
    /// Clouds: flat, packed colour, a column of values, a coordinate.
    cloud: [Program; 4],
    line: Program,
    tri: Program,
    mesh: Program,
    solid: Program,
    /// Each unit shape's corners and normals, in the order of [`Shape::ALL`].
    shapes: Vec<UnitBuffers>,
    quad: VertexBuffer<[f32; 2]>,
    line_quad: VertexBuffer<[f32; 2]>,
}

impl Renderer {
    /// Compiles the programs on eframe's GL context.
    pub fn new(gl: Arc<three_d::context::Context>) -> Result<Renderer, String> {
        let ctx = Context::from_gl_context(gl).map_err(|e| e.to_string())?;
        let prog =
            |vs: &str, fs: &str| Program::from_source(&ctx, vs, fs).map_err(|e| e.to_string());
        let quad = VertexBuffer::new_with_data(
            &ctx,
            &[
                [-1.0f32, -1.0],
                [1.0, -1.0],
                [1.0, 1.0],
                [-1.0, -1.0],
                [1.0, 1.0],
                [-1.0, 1.0],
            ],
        );
        let line_quad = VertexBuffer::new_with_data(
            &ctx,
            &[
                [0.0f32, -1.0],
                [1.0, -1.0],
                [1.0, 1.0],
                [0.0, -1.0],
                [1.0, 1.0],
                [0.0, 1.0],
            ],
        );
        Ok(Renderer {
            point: prog(POINT_VS, POINT_FS)?,
            cloud: [
                prog(&format!("#define PAINT 0\n{CLOUD_VS}"), POINT_FS)?,
                prog(&format!("#define PAINT 1\n{CLOUD_VS}"), POINT_FS)?,
                prog(&format!("#define PAINT 2\n{CLOUD_VS}"), POINT_FS)?,
                prog(&format!("#define PAINT 3\n{CLOUD_VS}"), POINT_FS)?,
            ],
            line: prog(LINE_VS, PLAIN_FS)?,
            tri: prog(TRI_VS, PLAIN_FS)?,
            mesh: prog(MESH_VS, PLAIN_FS)?,
            solid: prog(SOLID_VS, PLAIN_FS)?,
            shapes: Shape::ALL
                .iter()
                .map(|s| {
                    let m = s.mesh();
                    UnitBuffers {
                        pos: VertexBuffer::new_with_data(&ctx, &m.pos),
                        normal: VertexBuffer::new_with_data(&ctx, &m.normal),
                        n: m.pos.len() as u32,
                    }
                })
                .collect(),
            quad,
            line_quad,
            ctx,
        })
    }

    /// The three-d context (for tests that draw into a texture of their own).
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Uploads a scene, every cloud anew.
    pub fn upload(&self, s: &Scene) -> Gpu {
        self.upload_with(s, &mut CloudCache::default())
    }

    /// Uploads a scene: its clouds from `cache` where they are there (added to it where not),
    /// the rest (markers, lines, solids: small) anew.
    pub fn upload_with(&self, s: &Scene, cache: &mut CloudCache) -> Gpu {
        let c = &self.ctx;
        let clouds =
            s.clouds
                .iter()
                .filter(|d| !d.points.xyz.is_empty())
                .map(|d| {
                    let p = &d.points;
                    let b = cache.by_id.entry(d.id).or_insert_with(|| {
                        cache.uploaded_points += p.xyz.len() as u64;
                        Arc::new(CloudBuffers {
                            pos: InstanceBuffer::new_with_data(c, &p.xyz),
                            color: (p.rgb.len() == p.xyz.len())
                                .then(|| InstanceBuffer::new_with_data(c, &p.rgb)),
                            n: p.xyz.len() as u32,
                        })
                    });
                    let b = Arc::clone(b);
                    let values = match (d.paint, d.values) {
                        (CloudPaint::Value { .. }, Values::Column(k)) => p
                            .columns
                            .get(k)
                            .filter(|(_, v)| v.len() == p.xyz.len())
                            .map(|(_, v)| {
                                Arc::clone(cache.values.entry((d.id, k)).or_insert_with(|| {
                                    Arc::new(InstanceBuffer::new_with_data(c, v))
                                }))
                            }),
                        _ => None,
                    };
                    CloudGpu {
                        buffers: b,
                        values,
                        draw: d.clone(),
                    }
                })
                .collect();
        let points = s
            .points
            .iter()
            .filter(|p| !p.pos.is_empty() && p.pos.len() == p.color.len())
            .map(|p| {
                (
                    InstanceBuffer::new_with_data(c, &p.pos),
                    InstanceBuffer::new_with_data(c, &p.color),
                    p.size,
                    p.metres,
                    p.pos.len() as u32,
                )
            })
            .collect();
        let n = s.line_a.len();
        let lines =
            (n > 0 && s.line_b.len() == n && s.line_color.len() == n && s.line_width.len() == n)
                .then(|| LineBuffers {
                    a: InstanceBuffer::new_with_data(c, &s.line_a),
                    b: InstanceBuffer::new_with_data(c, &s.line_b),
                    color: InstanceBuffer::new_with_data(c, &s.line_color),
                    width: InstanceBuffer::new_with_data(c, &s.line_width),
                    n: n as u32,
                });
        let tris = (!s.tri_pos.is_empty() && s.tri_pos.len() == s.tri_color.len()).then(|| {
            (
                VertexBuffer::new_with_data(c, &s.tri_pos),
                VertexBuffer::new_with_data(c, &s.tri_color),
                s.tri_pos.len() as u32,
            )
        });
        let meshes = s
            .meshes
            .iter()
            .filter(|m| !m.pos.is_empty() && m.pos.len() == m.color.len())
            .map(|m| {
                let b = cache.meshes.entry(m.id).or_insert_with(|| {
                    cache.uploaded_corners += m.pos.len() as u64;
                    Arc::new(MeshBuffers {
                        pos: VertexBuffer::new_with_data(c, &m.pos),
                        normal: VertexBuffer::new_with_data(c, &m.normal),
                        color: VertexBuffer::new_with_data(c, &m.color),
                        n: m.pos.len() as u32,
                    })
                });
                (Arc::clone(b), m.pose)
            })
            .collect();
        Gpu {
            points,
            clouds,
            meshes,
            solids: self.upload_solids(&s.solids),
            lines,
            tris,
        }
    }

    /// The solids, an instance buffer set for each shape they use.
    fn upload_solids(&self, solids: &[Solid]) -> Vec<SolidBuffers> {
        // Per shape: the instances' axes and centres, and colours.
        type Instances = ([Vec<[f32; 3]>; 4], Vec<[u8; 4]>);
        let mut by_shape: Vec<Instances> = Shape::ALL.iter().map(|_| Default::default()).collect();
        for s in solids {
            let (axes, color) = &mut by_shape[s.shape.index()];
            for (a, v) in axes.iter_mut().zip(s.m) {
                a.push(v);
            }
            color.push(s.color);
        }
        by_shape
            .into_iter()
            .enumerate()
            .filter(|(_, (_, color))| !color.is_empty())
            .map(|(shape, (axes, color))| SolidBuffers {
                shape,
                axes: axes.map(|a| InstanceBuffer::new_with_data(&self.ctx, &a)),
                n: color.len() as u32,
                color: InstanceBuffer::new_with_data(&self.ctx, &color),
            })
            .collect()
    }

    /// Draws `gpu` into `viewport` of the bound framebuffer (of `screen` size in pixels),
    /// clearing that rectangle's depth (and colour when the view says so) first.
    pub fn draw(&self, gpu: &Gpu, view: &View, viewport: Viewport, screen: (u32, u32)) {
        let scissor = ScissorBox {
            x: viewport.x,
            y: viewport.y,
            width: viewport.width,
            height: viewport.height,
        };
        let clear = match view.clear {
            Some([r, g, b, a]) => ClearState::color_and_depth(r, g, b, a, 1.0),
            None => ClearState::depth(1.0),
        };
        RenderTarget::screen(&self.ctx, screen.0, screen.1).clear_partially(scissor, clear);
        self.ctx.set_scissor(scissor);
        self.draw_into(gpu, view, viewport);
    }

    /// Draws `gpu` into a `w` × `h` picture of its own (not the window), rows from the top:
    /// what a saved view and the pixel tests see.
    pub fn draw_offscreen(&self, gpu: &Gpu, view: &View, w: u32, h: u32) -> Vec<[u8; 4]> {
        let color = Texture2D::new_empty::<[u8; 4]>(
            &self.ctx,
            w,
            h,
            Interpolation::Nearest,
            Interpolation::Nearest,
            None,
            Wrapping::ClampToEdge,
            Wrapping::ClampToEdge,
        );
        let depth = DepthTexture2D::new::<f32>(
            &self.ctx,
            w,
            h,
            Wrapping::ClampToEdge,
            Wrapping::ClampToEdge,
        );
        let target = RenderTarget::new(color.as_color_target(None), depth.as_depth_target());
        let [r, g, b, a] = view.clear.unwrap_or([0.0, 0.0, 0.0, 1.0]);
        target
            .clear(ClearState::color_and_depth(r, g, b, a, 1.0))
            .write::<three_d::CoreError>(|| {
                self.draw_into(gpu, view, Viewport::new_at_origo(w, h));
                Ok(())
            })
            .ok();
        target.read_color()
    }

    /// Draws `gpu` into `viewport` of the framebuffer bound now (a render target's `write`).
    pub fn draw_into(&self, gpu: &Gpu, view: &View, viewport: Viewport) {
        let vp = three_d::Mat4::from(view.view_proj);
        let size = three_d::vec2(viewport.width as f32 / 2.0, viewport.height as f32 / 2.0);
        let states = RenderStates {
            depth_test: DepthTest::LessOrEqual,
            write_mask: WriteMask::default(),
            blend: Blend::TRANSPARENCY,
            cull: Cull::None,
        };
        if let Some((pos, color, n)) = &gpu.tris {
            let p = &self.tri;
            p.use_uniform("viewProj", vp);
            p.use_vertex_attribute("pos", pos);
            p.use_vertex_attribute("color", color);
            p.draw_arrays(states, viewport, *n);
        }
        for (b, pose) in &gpu.meshes {
            let p = &self.mesh;
            p.use_uniform("viewProj", vp);
            p.use_uniform("model", three_d::Mat4::from(*pose));
            p.use_vertex_attribute("pos", &b.pos);
            p.use_vertex_attribute("normal", &b.normal);
            p.use_vertex_attribute("color", &b.color);
            p.draw_arrays(states, viewport, b.n);
        }
        for b in &gpu.solids {
            let p = &self.solid;
            let unit = &self.shapes[b.shape];
            p.use_uniform("viewProj", vp);
            p.use_vertex_attribute("pos", &unit.pos);
            p.use_vertex_attribute("normal", &unit.normal);
            for (name, a) in ["ax", "ay", "az", "origin"].into_iter().zip(&b.axes) {
                p.use_instance_attribute(name, a);
            }
            p.use_instance_attribute("color", &b.color);
            p.draw_arrays_instanced(states, viewport, unit.n, b.n);
        }
        if let Some(l) = &gpu.lines {
            let p = &self.line;
            p.use_uniform("viewProj", vp);
            p.use_uniform("viewport", size);
            p.use_uniform("pxPerM", view.px_per_m);
            p.use_vertex_attribute("corner", &self.line_quad);
            p.use_instance_attribute("a", &l.a);
            p.use_instance_attribute("b", &l.b);
            p.use_instance_attribute("color", &l.color);
            p.use_instance_attribute("width", &l.width);
            p.draw_arrays_instanced(states, viewport, 6, l.n);
        }
        let solid = RenderStates {
            blend: Blend::Disabled,
            ..states
        };
        for g in &gpu.clouds {
            let (b, d) = (&g.buffers, &g.draw);
            let (k, flat, range) = match (d.paint, &b.color, &g.values, d.values) {
                (CloudPaint::Rgb, Some(_), _, _) => (1, [255; 4], (0.0, 1.0)),
                (CloudPaint::Value { lo, hi, flat }, _, Some(_), _) => (2, flat, (lo, hi)),
                (CloudPaint::Value { lo, hi, flat }, _, _, Values::Axis(_)) => (3, flat, (lo, hi)),
                (CloudPaint::Flat(c), ..) | (CloudPaint::Value { flat: c, .. }, ..) => {
                    (0, c, (0.0, 1.0))
                }
                (CloudPaint::Rgb, None, ..) => (0, [255; 4], (0.0, 1.0)),
            };
            let p = &self.cloud[k];
            p.use_uniform("viewProj", vp);
            p.use_uniform("model", three_d::Mat4::from(d.pose));
            p.use_uniform("viewport", size);
            p.use_uniform("size", d.size / 2.0);
            let f = |v: u8| f32::from(v) / 255.0;
            // Each program uses what its painting needs.
            p.use_uniform_if_required(
                "flatColor",
                three_d::vec4(f(flat[0]), f(flat[1]), f(flat[2]), f(flat[3])),
            );
            p.use_uniform_if_required("range", three_d::vec2(range.0, range.1));
            if let Values::Axis(a) = d.values {
                p.use_uniform_if_required("axis", a as f32);
            }
            p.use_vertex_attribute("corner", &self.quad);
            p.use_instance_attribute("pos", &b.pos);
            match (k, &b.color, &g.values) {
                (1, Some(c), _) => p.use_instance_attribute("color", c),
                (2, _, Some(v)) => p.use_instance_attribute("value", v.as_ref()),
                _ => {}
            }
            p.draw_arrays_instanced(solid, viewport, 6, b.n);
        }
        let p = &self.point;
        for (pos, color, sz, metres, n) in &gpu.points {
            // Point sizes are diameters; the quad's corners are at ±1, so half of it.
            p.use_uniform("viewProj", vp);
            p.use_uniform("viewport", size);
            p.use_uniform("pxPerM", view.px_per_m);
            p.use_uniform("size", *sz / 2.0);
            p.use_uniform("metres", if *metres { 1.0f32 } else { 0.0 });
            p.use_vertex_attribute("corner", &self.quad);
            p.use_instance_attribute("pos", pos);
            p.use_instance_attribute("color", color);
            p.draw_arrays_instanced(solid, viewport, 6, *n);
        }
    }
}
