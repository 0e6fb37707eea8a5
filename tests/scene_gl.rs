//! The 3D panel's renderer on a real GL context: a window of eframe's glow renderer under X
//! (Xvfb with Mesa's llvmpipe when there is no display; started here when `DISPLAY` is unset),
//! scenes drawn into a picture of their own and read back, each thing where and in the colour
//! the scene puts it. Also the scene built from the demo recording, through its transforms,
//! drawn and seen.
//!
//! A test binary of its own with `main` (`harness = false`): winit opens windows on the main
//! thread only.

use std::process::{Child, Command};
use std::sync::{Arc, Mutex};

use bagscope_app::scene::camera::Camera;
use bagscope_app::scene::render::Renderer;
use bagscope_ops::spatial::scene::{PointSet, Scene};

type Check = Box<dyn FnOnce(&Renderer) -> Result<(), String> + Send>;
/// Each test's name and how it ended.
type Results = Arc<Mutex<Vec<(String, Result<(), String>)>>>;

/// A picture of `s` seen by `cam`, `w` × `h`, black background.
fn draw(r: &Renderer, s: &Scene, cam: &Camera, w: u32, h: u32) -> Vec<[u8; 4]> {
    let mut v = cam.view(w as f32, h as f32);
    v.clear = Some([0.0, 0.0, 0.0, 1.0]);
    let gpu = r.upload(s);
    r.draw_offscreen(&gpu, &v, w, h)
}

/// The camera straight above the origin looking down, +x to the right and +y up, `half`
/// metres from the middle to the top edge.
fn top_down(half: f32) -> Camera {
    Camera {
        target: [0.0; 3],
        yaw: -std::f32::consts::FRAC_PI_2,
        pitch: 0.0,
        dist: half / 25f32.to_radians().tan(),
        top: true,
    }
}

fn px(img: &[[u8; 4]], w: u32, x: i64, y: i64) -> [u8; 4] {
    img[(y * w as i64 + x) as usize]
}

/// The middle of the pixels of colour close to `c` (within 40 a channel), and how many.
fn find(img: &[[u8; 4]], w: u32, c: [u8; 3]) -> Option<(f64, f64, usize)> {
    let (mut sx, mut sy, mut n) = (0.0, 0.0, 0usize);
    for (i, p) in img.iter().enumerate() {
        if (0..3).all(|k| (i32::from(p[k]) - i32::from(c[k])).abs() <= 40) {
            sx += (i as u32 % w) as f64;
            sy += (i as u32 / w) as f64;
            n += 1;
        }
    }
    (n > 0).then(|| (sx / n as f64 + 0.5, sy / n as f64 + 0.5, n))
}

fn near(got: (f64, f64, usize), want: (f64, f64), what: &str) -> Result<(), String> {
    if (got.0 - want.0).abs() > 1.5 || (got.1 - want.1).abs() > 1.5 {
        return Err(format!(
            "{what} at ({:.1}, {:.1}), wanted ({:.1}, {:.1})",
            got.0, got.1, want.0, want.1
        ));
    }
    Ok(())
}

/// Points of known colours land on the pixels a top-down view puts them at, at the size asked.
fn points_land_where_they_are(r: &Renderer) -> Result<(), String> {
    let (w, h) = (200u32, 160u32);
    // 2 m from the middle to the top: 40 px a metre.
    let cam = top_down(2.0);
    let mut s = Scene::default();
    s.points.push(PointSet {
        size: 6.0,
        pos: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.5],
            [-1.5, -1.0, 0.0],
        ],
        color: vec![
            [255, 0, 0, 255],
            [0, 255, 0, 255],
            [0, 0, 255, 255],
            [255, 255, 0, 255],
        ],
        ..Default::default()
    });
    let img = draw(r, &s, &cam, w, h);
    let (cx, cy) = (100.0, 80.0);
    let red = find(&img, w, [255, 0, 0]).ok_or("the red point is not drawn")?;
    near(red, (cx, cy), "red point at the origin")?;
    // A 6 px point covers about 28 pixels (a disc of radius 3).
    if !(18..=40).contains(&red.2) {
        return Err(format!("the 6 px point covers {} pixels", red.2));
    }
    near(
        find(&img, w, [0, 255, 0]).ok_or("no green point")?,
        (cx + 40.0, cy),
        "green point at x = 1 m",
    )?;
    near(
        find(&img, w, [0, 0, 255]).ok_or("no blue point")?,
        (cx, cy - 40.0),
        "blue point at y = 1 m",
    )?;
    near(
        find(&img, w, [255, 255, 0]).ok_or("no yellow point")?,
        (cx - 60.0, cy + 40.0),
        "yellow point at (-1.5, -1)",
    )?;
    // Elsewhere the background.
    if px(&img, w, 5, 5) != [0, 0, 0, 255] {
        return Err(format!("the background is {:?}", px(&img, w, 5, 5)));
    }
    Ok(())
}

/// A cube marker seen from above covers its square, a nearer thing hides a farther one, and a
/// line is drawn between its ends.
fn solids_and_lines(r: &Renderer) -> Result<(), String> {
    let (w, h) = (200u32, 160u32);
    let cam = top_down(2.0);
    let mut s = Scene::default();
    let at = |x, y, z| bagscope_ops::geom::Pose {
        t: [x, y, z],
        q: [0.0, 0.0, 0.0, 1.0],
    };
    // A 1 m cube at (-1, 0), its top at z = 0.5; a small cube above its middle, nearer the eye.
    s.cube(&at(-1.0, 0.0, 0.0), [1.0, 1.0, 1.0], [200, 200, 200, 255]);
    s.cube(&at(-1.0, 0.0, 1.0), [0.25, 0.25, 0.25], [250, 40, 250, 255]);
    // A line from (0.5, -1) to (1.5, -1).
    s.line([0.5, -1.0, 0.0], [1.5, -1.0, 0.0], [0, 255, 255, 255], 0.0);
    let img = draw(r, &s, &cam, w, h);
    // The big cube's top (lit, so a grey between the shades) spans x 40..80, y 60..100.
    let top = px(&img, w, 50, 70);
    if !(top[0] > 100 && top[0] == top[1] && top[1] == top[2]) {
        return Err(format!("the cube's top is {top:?}"));
    }
    for (x, y) in [(36, 80), (84, 80), (60, 56), (60, 104)] {
        if px(&img, w, x, y) != [0, 0, 0, 255] {
            return Err(format!(
                "({x}, {y}), outside the cube, is {:?}",
                px(&img, w, x, y)
            ));
        }
    }
    let pink = find(&img, w, [250, 40, 250]).ok_or("the small cube above is hidden")?;
    near(pink, (60.0, 80.0), "small cube")?;
    if !(80..=120).contains(&pink.2) {
        return Err(format!("the 10 px cube covers {} pixels", pink.2));
    }
    let cyan = find(&img, w, [0, 255, 255]).ok_or("the line is not drawn")?;
    near(cyan, (140.0, 120.0), "line's middle")?;
    if cyan.2 < 35 {
        return Err(format!("the 40 px line covers only {} pixels", cyan.2));
    }
    Ok(())
}

/// Solids (boxes, spheres, cylinders, cones: unit shapes drawn instanced) land on the pixels,
/// in the lit colours, of the triangles the CPU places for them (`Scene::all_triangles`): the
/// same scene drawn both ways, seen from an angle, pixel for pixel.
fn solids_drawn_as_the_cpu_places_them(r: &Renderer) -> Result<(), String> {
    let (w, h) = (240u32, 180u32);
    let cam = Camera {
        target: [0.0; 3],
        yaw: 0.7,
        pitch: 0.5,
        dist: 3.5,
        top: false,
    };
    let turned = |t: [f64; 3], q: [f64; 4]| bagscope_ops::geom::Pose { t, q };
    let mut s = Scene::default();
    // Scaled unevenly and turned, so a normal turned without the scale would light it wrong.
    let q = [0.2, -0.3, 0.4, 0.843_0];
    s.cube(
        &turned([-1.2, 0.0, 0.0], q),
        [1.2, 0.4, 0.7],
        [200, 80, 60, 255],
    );
    s.sphere(
        &turned([0.8, 0.9, 0.2], q),
        [0.9, 0.5, 1.3],
        [60, 200, 90, 255],
    );
    s.cylinder(
        &turned([0.9, -1.0, 0.0], q),
        [0.6, 0.3, 1.0],
        [70, 90, 230, 255],
    );
    s.arrow(
        [-1.0, -1.5, 0.5],
        [1.5, 1.5, 1.0],
        0.15,
        0.35,
        0.5,
        [240, 220, 40, 255],
    );
    if s.solids.len() != 5 {
        return Err(format!("{} solids, wanted 5", s.solids.len()));
    }
    let mut flat = Scene::default();
    (flat.tri_pos, flat.tri_color) = s.all_triangles();
    if flat.tri_pos.len() != 3 * s.triangle_count() {
        return Err(format!(
            "{} corners for {} triangles",
            flat.tri_pos.len(),
            s.triangle_count()
        ));
    }
    let (a, b) = (draw(r, &s, &cam, w, h), draw(r, &flat, &cam, w, h));
    let covered = b.iter().filter(|p| **p != [0, 0, 0, 255]).count();
    let off = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| (0..3).any(|c| (i32::from(x[c]) - i32::from(y[c])).abs() > 2))
        .count();
    if covered < 3000 {
        return Err(format!("only {covered} pixels drawn"));
    }
    // Edges may fall a pixel either way (the GPU places corners in f32 its own way).
    println!("    solids: {covered} pixels drawn, {off} differ from the CPU's triangles");
    if off * 100 > covered {
        return Err(format!(
            "{off} of {covered} pixels differ between the instanced solids and the CPU's triangles"
        ));
    }
    Ok(())
}

/// A scene builder on a demo recording of `secs` seconds (its transforms read), and the
/// recording's start. The recording's file is removed once open.
fn demo_builder(
    secs: u32,
    name: &str,
) -> Result<(bagscope_ops::spatial::scene::Builder, u64), String> {
    let dir = std::env::temp_dir().join(format!("bagscope-scene-gl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, secs).map_err(|e| e.to_string())?;
    let bag = bagscope_reader::Bag::open(&p).map_err(|e| e.to_string())?;
    let tables = bag.tables().map_err(|e| e.to_string())?;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let tf = bagscope_ops::spatial::tf::TfHistory::read(&bag, None, None, &cancel)
        .map_err(|e| e.to_string())?;
    let start = bag.summary().start_ns.unwrap_or(0);
    let b = bagscope_ops::spatial::scene::Builder::new(bag, tables, Some(Arc::new(tf)));
    let _ = std::fs::remove_dir_all(&dir);
    Ok((b, start))
}

/// The demo recording's scene at 60 s in `map`: the lidar's cloud on the room's walls and
/// floor (placed through odom -> base_link -> laser at its stamp), the goal marker where the
/// planner put it, both drawn.
fn demo_scene(r: &Renderer) -> Result<(), String> {
    use bagscope_ops::spatial::scene::{Frames, Kind, Layer, Request};
    let (mut b, start) = demo_builder(70, "demo")?;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let t = start + 60_000_000_000;
    let mut cloud = Layer::new("/lidar/points", Kind::Cloud2, 0);
    cloud.paint = String::new();
    cloud.color = [255, 0, 0, 255];
    let req = Request {
        t,
        fixed: "map".into(),
        layers: vec![cloud, Layer::new("/planner/markers", Kind::Markers, 1)],
        frames: Frames {
            axes: false,
            names: false,
            links: false,
            ..Default::default()
        },
        grid: 0,
    };
    let scene = b.build(&req, &cancel);
    if scene.point_count() < 1000 {
        return Err(format!(
            "{} points: {:?}",
            scene.point_count(),
            scene.status
        ));
    }
    // Seen from above, the room (10 × 6 m, odom 0.5 m right and 0.25 m up of map) fills the
    // middle: red on its edges, nothing far outside.
    let cam = Camera {
        target: [0.5, 0.25, 0.0],
        ..top_down(4.0)
    };
    let (w, h) = (320u32, 240u32);
    let img = draw(r, &scene, &cam, w, h);
    // 30 px a metre: the walls x = ±5 (odom) at columns 10 and 310, y = ±3 at rows 30 and 210.
    let is_red = |p: &[u8; 4]| p[0] > 200 && p[1] < 60;
    let band = |x0: i64, x1: i64, y0: i64, y1: i64| {
        (y0..=y1)
            .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
            .filter(|&(x, y)| is_red(&px(&img, w, x, y)))
            .count()
    };
    for (name, n) in [
        ("x = 5", band(306, 314, 40, 200)),
        ("x = -5", band(6, 14, 40, 200)),
        ("y = 3", band(20, 300, 26, 34)),
        ("y = -3", band(20, 300, 206, 214)),
    ] {
        if n < 60 {
            return Err(format!("{n} cloud pixels on the wall {name}"));
        }
    }
    let outside = img
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            let (x, y) = ((*i as u32 % w) as i64, (*i as u32 / w) as i64);
            is_red(p) && !((5..=315).contains(&x) && (25..=215).contains(&y))
        })
        .count();
    if outside > 0 {
        return Err(format!("{outside} cloud pixels outside the room"));
    }
    // The goal arrow (green) 10 s ahead on the figure of eight, in odom shifted into map.
    let green = find(&img, w, [51, 255, 76]).ok_or("the goal marker is not drawn")?;
    let a = 2.0 * std::f64::consts::PI / 60.0;
    let (gx, gy) = (4.0 * (a * 70.0).sin(), 2.0 * (2.0 * a * 70.0).sin());
    if (green.0 - (160.0 + 30.0 * gx)).abs() > 12.0 || (green.1 - (120.0 - 30.0 * gy)).abs() > 12.0
    {
        return Err(format!(
            "the goal marker at {green:?}, wanted near odom ({gx:.2}, {gy:.2})"
        ));
    }
    Ok(())
}

/// A million points (a ring of a lidar's returns): uploaded and drawn, the ring's pixels lit
/// and its middle empty; the time to upload and to draw printed (software GL here).
fn a_million_points(r: &Renderer) -> Result<(), String> {
    let n = 1_000_000usize;
    let mut s = Scene::default();
    s.points.push(PointSet {
        size: 2.0,
        pos: (0..n)
            .map(|i| {
                let a = i as f32 * 0.000_628_3;
                let rr = 1.0 + (i % 32) as f32 * 0.02;
                [rr * a.cos(), rr * a.sin(), 0.0]
            })
            .collect(),
        color: vec![[255, 255, 255, 255]; n],
        ..Default::default()
    });
    let cam = top_down(2.0);
    let (w, h) = (320u32, 240u32);
    let mut v = cam.view(w as f32, h as f32);
    v.clear = Some([0.0, 0.0, 0.0, 1.0]);
    let t0 = std::time::Instant::now();
    let gpu = r.upload(&s);
    let t1 = std::time::Instant::now();
    let img = r.draw_offscreen(&gpu, &v, w, h);
    let t2 = std::time::Instant::now();
    let lit = |x: i64, y: i64| px(&img, w, x, y)[0] > 200;
    // 60 px a metre: the ring spans radii 60..97 px round (160, 120).
    if !(lit(160 + 70, 120) && lit(160, 120 - 80) && lit(160 - 90, 120)) {
        return Err("the ring is not drawn".into());
    }
    if lit(160, 120) || lit(160 + 30, 120) {
        return Err("the middle of the ring is drawn".into());
    }
    println!(
        "    1,000,000 points: upload {:.1} ms, draw and read back {:.1} ms",
        (t1 - t0).as_secs_f64() * 1e3,
        (t2 - t1).as_secs_f64() * 1e3
    );
    Ok(())
}

/// The demo robot drawn from its URDF, seen from straight above in its own frame: the blue
/// body (a box 0.42 × 0.3 m at the origin, lit from above) over exactly its footprint, a dark
/// wheel at each side (y = ±0.17 m), the camera on the mast orange behind the middle.
fn robot_from_its_urdf(r: &Renderer) -> Result<(), String> {
    use bagscope_ops::spatial::scene::{Frames, Request};
    let (mut b, start) = demo_builder(12, "robot")?;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    // At 6 s the mast is panned 1.2 rad: its camera 0.24 m up, at the mast (-0.1, 0).
    let t = start + 6_000_000_000;
    let req = Request {
        t,
        fixed: "base_link".into(),
        layers: Vec::new(),
        frames: Frames {
            axes: false,
            names: false,
            links: false,
            ..Default::default()
        },
        grid: 0,
    };
    let scene = b.build(&req, &cancel);
    let st = &scene.robot_status;
    if !st.problems.is_empty() || !st.text.contains("7 links") {
        return Err(format!("{st:?}"));
    }
    // 200 px a metre, base_link's origin at the middle (100, 100), +x right, +y up.
    let (w, h) = (200u32, 200u32);
    let img = draw(r, &scene, &top_down(0.5), w, h);
    let close =
        |p: [u8; 4], c: [u8; 3]| (0..3).all(|k| (i32::from(p[k]) - i32::from(c[k])).abs() <= 30);
    // The body's top: (0.22, 0.42, 0.85) lit at 0.55 + 0.45 × 0.83 of itself.
    let blue = [52, 99, 199];
    let (mut lo, mut hi) = ((i64::MAX, i64::MAX), (i64::MIN, i64::MIN));
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            if close(px(&img, w, x, y), blue) {
                lo = (lo.0.min(x), lo.1.min(y));
                hi = (hi.0.max(x), hi.1.max(y));
            }
        }
    }
    // x from -0.21 to 0.21 m: columns 58..142; y from 0.15 to -0.15 m: rows 70..130.
    for (got, want, what) in [
        (lo.0, 58, "left edge"),
        (hi.0, 141, "right edge"),
        (lo.1, 70, "top edge"),
        (hi.1, 129, "bottom edge"),
    ] {
        if (got - want).abs() > 2 {
            return Err(format!(
                "the body's {what} at {got}, wanted {want} (box {lo:?}..{hi:?})"
            ));
        }
    }
    // The wheels (0.12, 0.12, 0.12) beside it at y = ±0.17 m (rows 66 and 134), x = 0.06 m.
    for row in [66, 134] {
        let p = px(&img, w, 112, row);
        if !(p[0] > 10 && p[0] < 60 && p[0] == p[2]) {
            return Err(format!("no wheel at column 112, row {row}: {p:?}"));
        }
    }
    // The camera head and the lidar (0.95, 0.62, 0.12): the head at the mast, 0.1 m behind
    // the middle (column 80; the pan turns it about the mast), the lidar 0.12 m ahead (124).
    let orange_near = |cx: i64, r: i64| {
        (cx - r..=cx + r)
            .flat_map(|x| (100 - r..=100 + r).map(move |y| (x, y)))
            .filter(|&(x, y)| close(px(&img, w, x, y), [240, 160, 30]))
            .count()
    };
    let (head, lidar) = (orange_near(80, 14), orange_near(124, 10));
    if head < 100 || lidar < 150 {
        return Err(format!(
            "{head} orange pixels at the camera head, {lidar} at the lidar"
        ));
    }
    Ok(())
}

/// A mesh stays on the GPU from one scene to the next: a square (two triangles, facing up)
/// drawn where its pose puts it, lit as the CPU lights it; the next scene moves it by its pose
/// alone, uploading nothing.
fn meshes_kept_on_the_gpu(r: &Renderer) -> Result<(), String> {
    use bagscope_app::scene::render::CloudCache;
    use bagscope_ops::spatial::scene::MeshDraw;
    let square = |at: [f32; 2]| MeshDraw {
        id: 7,
        pos: Arc::new(vec![
            [-0.25, -0.25, 0.0],
            [0.25, -0.25, 0.0],
            [0.25, 0.25, 0.0],
            [-0.25, -0.25, 0.0],
            [0.25, 0.25, 0.0],
            [-0.25, 0.25, 0.0],
        ]),
        normal: Arc::new(vec![[0.0, 0.0, 1.0]; 6]),
        color: Arc::new(vec![[200, 120, 40, 255]; 6]),
        pose: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [at[0], at[1], 0.0, 1.0],
        ],
    };
    let (w, h) = (200u32, 160u32);
    let mut v = top_down(2.0).view(w as f32, h as f32);
    v.clear = Some([0.0, 0.0, 0.0, 1.0]);
    let mut cache = CloudCache::default();
    for (k, at) in [[1.0f32, 0.5], [-1.0, -0.5]].into_iter().enumerate() {
        let mut s = Scene::default();
        s.meshes.push(square(at));
        let before = cache.uploaded_corners;
        let img = r.draw_offscreen(&r.upload_with(&s, &mut cache), &v, w, h);
        if k > 0 && cache.uploaded_corners != before {
            return Err("a mesh moved by its pose was uploaded again".into());
        }
        // 40 px a metre, (0, 0) at (100, 80), +y up: the square 20 px a side.
        let (x, y) = ((100.0 + 40.0 * at[0]) as i64, (80.0 - 40.0 * at[1]) as i64);
        let (got, want) = (px(&img, w, x, y), s.meshes[0].lit(0));
        if (0..3).any(|c| (i32::from(got[c]) - i32::from(want[c])).abs() > 3) {
            return Err(format!(
                "the mesh at ({x}, {y}): {got:?} by the GPU, {want:?} by the CPU"
            ));
        }
        let lit = find(&img, w, [want[0], want[1], want[2]]).ok_or("the mesh is not drawn")?;
        if lit.2 < 300 || lit.2 > 500 {
            return Err(format!("{} pixels of the mesh, wanted about 400", lit.2));
        }
    }
    Ok(())
}

/// Clouds stay on the GPU from one scene to the next: a scene that keeps a cloud and moves it
/// uploads only its new cloud, draws the kept one where its new pose puts it, and paints by
/// value as the CPU does (turbo over the layer's range), by packed colour, and flat.
fn clouds_kept_on_the_gpu(r: &Renderer) -> Result<(), String> {
    use bagscope_app::scene::render::CloudCache;
    use bagscope_ops::spatial::scene::cloud::Points;
    use bagscope_ops::spatial::scene::{CloudDraw, CloudPaint, Source, Values};
    use bagscope_reader::storage::IndexEntry;
    let cloud = |id: u64, value: f32, rgb: Option<[u8; 4]>, at: [f32; 2], paint| {
        let mut p = Points {
            // z = 0.75: what a cloud painted by z is painted by.
            xyz: vec![[0.0, 0.0, 0.75]],
            columns: vec![("intensity".into(), vec![value])],
            rgb: rgb.into_iter().collect(),
            ..Default::default()
        };
        p.measure();
        let entry = IndexEntry {
            time_ns: id,
            chunk: 0,
            offset: 0,
        };
        CloudDraw {
            id,
            layer: 0,
            points: Arc::new(p),
            pose: [
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
                [at[0], at[1], 0.0, 1.0],
            ],
            size: 8.0,
            values: match paint {
                CloudPaint::Value { .. } => Values::Column(0),
                _ => Values::None,
            },
            paint,
            source: Source { conn: 0, entry },
        }
    };
    let value = CloudPaint::Value {
        lo: 0.0,
        hi: 1.0,
        flat: [255, 255, 255, 255],
    };
    let (w, h) = (200u32, 160u32);
    // 40 px a metre, (0, 0) at pixel (100, 80), +y up.
    let mut v = top_down(2.0).view(w as f32, h as f32);
    v.clear = Some([0.0, 0.0, 0.0, 1.0]);
    let pixel = |p: [f32; 2]| ((100.0 + 40.0 * p[0]) as i64, (80.0 - 40.0 * p[1]) as i64);
    let mut cache = CloudCache::default();
    let mut one = Scene::default();
    one.clouds.push(cloud(1, 0.25, None, [-1.0, 0.0], value));
    one.clouds.push(cloud(
        2,
        0.0,
        Some([255, 0, 255, 255]),
        [1.0, 0.0],
        CloudPaint::Rgb,
    ));
    let img = r.draw_offscreen(&r.upload_with(&one, &mut cache), &v, w, h);
    let (x, y) = pixel([-1.0, 0.0]);
    let want = one.clouds[0].color(0);
    let got = px(&img, w, x, y);
    if (0..3).any(|k| (i32::from(got[k]) - i32::from(want[k])).abs() > 3) {
        return Err(format!(
            "a value of 0.25 painted {got:?} by the GPU, {want:?} by the CPU"
        ));
    }
    let (x, y) = pixel([1.0, 0.0]);
    if px(&img, w, x, y)[..3] != [255, 0, 255] {
        return Err(format!("the packed colour drawn {:?}", px(&img, w, x, y)));
    }
    // The next scene: cloud 2 kept and moved, cloud 1 gone, cloud 3 new.
    let mut two = Scene::default();
    two.clouds.push(cloud(
        2,
        0.0,
        Some([255, 0, 255, 255]),
        [0.0, 1.0],
        CloudPaint::Rgb,
    ));
    two.clouds.push(cloud(
        3,
        f32::NAN,
        None,
        [0.0, -1.0],
        CloudPaint::Flat([0, 255, 0, 255]),
    ));
    let before = cache.uploaded_points;
    let gpu = r.upload_with(&two, &mut cache);
    if cache.uploaded_points - before != 1 {
        return Err(format!(
            "{} points uploaded for a scene with one new cloud of one point",
            cache.uploaded_points - before
        ));
    }
    cache.keep_only(&two.clouds.iter().map(|c| c.id).collect());
    if cache.len() != 2 {
        return Err(format!("{} clouds kept on the GPU, wanted 2", cache.len()));
    }
    let img = r.draw_offscreen(&gpu, &v, w, h);
    let (x, y) = pixel([0.0, 1.0]);
    if px(&img, w, x, y)[..3] != [255, 0, 255] {
        return Err("the kept cloud is not where its new pose puts it".into());
    }
    let (x, y) = pixel([1.0, 0.0]);
    if px(&img, w, x, y)[..3] != [0, 0, 0] {
        return Err("the kept cloud is still drawn where it was".into());
    }
    let (x, y) = pixel([0.0, -1.0]);
    if px(&img, w, x, y)[..3] != [0, 255, 0] {
        return Err(format!("the flat cloud drawn {:?}", px(&img, w, x, y)));
    }
    let (x, y) = pixel([-1.0, 0.0]);
    if px(&img, w, x, y)[..3] != [0, 0, 0] {
        return Err("a cloud the scene no longer holds is drawn".into());
    }
    // Cloud 3 painted by z, then by its intensity column: no point uploaded again, each
    // colour as the CPU works it out.
    for values in [Values::Axis(2), Values::Column(0)] {
        let mut three = Scene::default();
        let mut c = cloud(3, 0.25, None, [0.0, -1.0], value);
        c.values = values;
        three.clouds.push(c);
        let before = cache.uploaded_points;
        let img = r.draw_offscreen(&r.upload_with(&three, &mut cache), &v, w, h);
        if cache.uploaded_points != before {
            return Err(format!("painting by {values:?} uploaded the points again"));
        }
        let (x, y) = pixel([0.0, -1.0]);
        let (got, want) = (px(&img, w, x, y), three.clouds[0].color(0));
        if (0..3).any(|k| (i32::from(got[k]) - i32::from(want[k])).abs() > 3) {
            return Err(format!(
                "painted by {values:?}: {got:?} by the GPU, {want:?} by the CPU"
            ));
        }
    }
    Ok(())
}

fn start_display() -> Option<Child> {
    if std::env::var_os("DISPLAY").is_some() {
        return None;
    }
    // On a display Xvfb picks itself (`-displayfd`: one no live server holds), written to its
    // stdout once it serves.
    let mut x = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "640x480x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("no DISPLAY and Xvfb cannot start ({e}): install xvfb"));
    let mut line = String::new();
    if let Some(out) = x.stdout.take() {
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line);
    }
    let n: u32 = line.trim().parse().expect("Xvfb's display number");
    // Set before any other thread is started (`set_var` is safe on edition 2021).
    std::env::set_var("DISPLAY", format!(":{n}"));
    Some(x)
}

struct TestApp {
    tests: Vec<(&'static str, Check)>,
    results: Results,
}

impl eframe::App for TestApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        if self.tests.is_empty() {
            return;
        }
        let gl = frame.gl().cloned();
        let mut out = Vec::new();
        match gl.map(Renderer::new) {
            Some(Ok(r)) => {
                for (name, t) in self.tests.drain(..) {
                    out.push((name.to_string(), t(&r)));
                }
            }
            other => {
                let why = match other {
                    Some(Err(e)) => e,
                    _ => "no GL context".into(),
                };
                for (name, _) in self.tests.drain(..) {
                    out.push((name.to_string(), Err(why.clone())));
                }
            }
        }
        if let Ok(mut r) = self.results.lock() {
            r.extend(out);
        }
        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

fn main() {
    // `cargo test -- --list` and filters from the harness: nothing to list but the one group.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        println!("scene_gl: test");
        return;
    }
    let mut xvfb = start_display();
    let tests: Vec<(&'static str, Check)> = vec![
        (
            "points_land_where_they_are",
            Box::new(points_land_where_they_are),
        ),
        ("solids_and_lines", Box::new(solids_and_lines)),
        (
            "solids_drawn_as_the_cpu_places_them",
            Box::new(solids_drawn_as_the_cpu_places_them),
        ),
        ("demo_scene", Box::new(demo_scene)),
        ("a_million_points", Box::new(a_million_points)),
        ("clouds_kept_on_the_gpu", Box::new(clouds_kept_on_the_gpu)),
        ("robot_from_its_urdf", Box::new(robot_from_its_urdf)),
        ("meshes_kept_on_the_gpu", Box::new(meshes_kept_on_the_gpu)),
    ];
    let n = tests.len();
    let results = Arc::new(Mutex::new(Vec::new()));
    let app = TestApp {
        tests,
        results: Arc::clone(&results),
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([320.0, 240.0]),
        depth_buffer: 24,
        ..Default::default()
    };
    let run = eframe::run_native(
        "bagscope scene_gl",
        options,
        Box::new(|_| Ok(Box::new(app))),
    );
    if let Some(x) = &mut xvfb {
        // Asked to end (SIGTERM), so that it removes its lock file, as a kill would not.
        let _ = Command::new("kill")
            .args(["-TERM", &x.id().to_string()])
            .status();
        let _ = x.wait();
    }
    if let Err(e) = run {
        panic!("the GL window could not run: {e}");
    }
    let results = results.lock().map(|r| r.clone()).unwrap_or_default();
    let mut failed = 0;
    for (name, r) in &results {
        match r {
            Ok(()) => println!("test {name} ... ok"),
            Err(e) => {
                failed += 1;
                println!("test {name} ... FAILED\n    {e}");
            }
        }
    }
    let passed = results.len() - failed;
    let missing = n - results.len();
    println!(
        "\ntest result: {}. {passed} passed; {} failed; 0 ignored; 0 measured; 0 filtered out\n",
        if failed + missing == 0 {
            "ok"
        } else {
            "FAILED"
        },
        failed + missing
    );
    if failed + missing > 0 {
        std::process::exit(1);
    }
}
