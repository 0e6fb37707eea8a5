//! Incremental scenes: the 3D scene a builder gives after any run of playheads (steps as
//! playback makes them, seeks back and far ahead, the same time twice) is the scene a builder
//! that never saw the run gives for the last playhead. A property test over random runs on the
//! demo recording: its lidar cloud (5 Hz), laser scan (10 Hz) and markers (1 Hz, replaced,
//! deleted, expiring), each layer with a decay of its own, through moving transforms.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::AtomicBool;

use bagscope_ops::spatial::scene::{Builder, Kind, Layer, Scene};

use super::scene::{demo, request};

/// xorshift64*: runs that are the same on every machine; the seed is printed on failure.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What a scene draws, in an order of its own: every point with its colour (as bits), every
/// line, triangle and label, every layer's status.
fn drawn(s: &Scene, layers: usize) -> Vec<String> {
    let mut out = Vec::new();
    for l in 0..layers {
        let set = s.layer_points(l);
        let mut pts: Vec<([u32; 3], [u8; 4])> = set
            .pos
            .iter()
            .zip(&set.color)
            .map(|(p, c)| (p.map(f32::to_bits), *c))
            .collect();
        pts.sort_unstable();
        out.push(format!("layer {l}: {} points, {:?}", pts.len(), pts));
    }
    for set in &s.points {
        let mut pts: Vec<[u32; 3]> = set.pos.iter().map(|p| p.map(f32::to_bits)).collect();
        pts.sort_unstable();
        out.push(format!("marker points of size {}: {pts:?}", set.size));
    }
    let mut lines: Vec<String> = (0..s.line_a.len())
        .map(|i| format!("{:?} {:?} {:?}", s.line_a[i], s.line_b[i], s.line_color[i]))
        .collect();
    lines.sort_unstable();
    out.push(format!("{} lines: {lines:?}", lines.len()));
    let (tri_pos, tri_color) = s.all_triangles();
    let mut tris: Vec<String> = tri_pos
        .chunks(3)
        .zip(tri_color.chunks(3))
        .map(|(p, c)| format!("{p:?} {c:?}"))
        .collect();
    tris.sort_unstable();
    out.push(format!("{} triangles: {tris:?}", tris.len()));
    let mut labels: Vec<String> = s.labels.iter().map(|l| format!("{l:?}")).collect();
    labels.sort_unstable();
    out.push(format!("labels: {labels:?}"));
    for st in &s.status {
        out.push(format!(
            "{}: {} {:?} {:?}",
            st.topic, st.text, st.problems, st.range
        ));
    }
    out
}

#[test]
fn a_scene_after_any_run_of_playheads_equals_one_built_from_scratch() {
    let (bag, tables, tf, _dir) = demo(30, "scene-steps");
    let s = bag.summary();
    let (start, end) = (s.start_ns.unwrap(), s.end_ns.unwrap());
    let cancel = AtomicBool::new(false);
    let seed = 0x5eed_0051_u64;
    let mut rng = Rng(seed);
    let mut checked = 0;
    // Compared scenes where the cloud, the scan and the markers drew something, and where the
    // cloud held several messages.
    let mut seen = [0usize; 4];
    for run in 0..10 {
        // Each layer's decay (0: the latest message only) and painting, chosen per run.
        let mut cloud = Layer::new("/lidar/points", Kind::Cloud2, 0);
        cloud.decay_s = [0.0, 0.5, 2.0, 4.0][rng.below(4) as usize];
        cloud.paint = ["z", "x", "", "intensity"][rng.below(4) as usize].into();
        let mut scan = Layer::new("/scan", Kind::Scan, 1);
        scan.decay_s = [0.0, 0.3, 1.5][rng.below(3) as usize];
        let mut markers = Layer::new("/planner/markers", Kind::Markers, 2);
        markers.decay_s = [0.0, 2.0][rng.below(2) as usize];
        let layers = vec![cloud, scan, markers];
        let fixed = ["map", "odom", "base_link"][rng.below(3) as usize];
        let mut incremental = Builder::new(bag.clone(), tables.clone(), Some(tf.clone()));
        let mut t = start + rng.below(end - start);
        let mut trail = Vec::new();
        for step in 0..14 {
            t = match rng.below(6) {
                // A frame of playback at 1× to 4× (16 to 70 ms).
                0..=2 => t + 16_000_000 * (1 + rng.below(4)),
                // A jump ahead of a few seconds.
                3 => t + rng.below(3_000_000_000),
                // Back a little (stepping back, scrubbing).
                4 => t.saturating_sub(rng.below(2_000_000_000)),
                // Anywhere.
                _ => start + rng.below(end - start),
            }
            .clamp(start, end);
            trail.push(t - start);
            let req = request(t, fixed, layers.clone());
            let got = incremental.build(&req, &cancel);
            // An idle worker warms up between some scenes (snapshots ahead of the playhead).
            for _ in 0..rng.below(3) {
                incremental.warm(&cancel);
            }
            // Every few steps, and at the last, against a builder that starts here.
            if step % 3 == 2 || step == 13 {
                let mut fresh = Builder::new(bag.clone(), tables.clone(), Some(tf.clone()));
                let want = fresh.build(&req, &cancel);
                let (a, b) = (drawn(&got, layers.len()), drawn(&want, layers.len()));
                for (x, y) in a.iter().zip(&b) {
                    assert!(
                        x == y,
                        "seed {seed:#x}, run {run}, playheads (ns from the start) {trail:?}, fixed {fixed}, layers {layers:?}:\n incremental {}\n from scratch {}",
                        &x[..x.len().min(600)],
                        &y[..y.len().min(600)]
                    );
                }
                assert_eq!(a.len(), b.len());
                checked += 1;
                for (l, n) in seen.iter_mut().take(2).enumerate() {
                    *n += usize::from(!got.layer_points(l).pos.is_empty());
                }
                seen[2] += usize::from(
                    !got.tri_pos.is_empty() || !got.solids.is_empty() || !got.line_a.is_empty(),
                );
                seen[3] += usize::from(got.clouds.iter().filter(|c| c.layer == 0).count() > 1);
            }
        }
    }
    assert!(checked >= 40, "{checked} scenes compared");
    assert!(
        seen.iter().all(|&n| n >= 8),
        "of {checked} scenes: cloud, scan, markers drawn, several clouds in {seen:?}"
    );
}

/// The warm-up of an idle worker replays the markers ahead of the playhead: once it is done, a
/// seek to near the end reads about a second of marker messages (from the last snapshot), not
/// every message since the start, and draws the same as a builder that starts there.
#[test]
fn a_warmed_up_builder_seeks_from_a_snapshot() {
    let (bag, tables, tf, _dir) = demo(30, "scene-warm");
    let s = bag.summary();
    let (start, end) = (s.start_ns.unwrap(), s.end_ns.unwrap());
    let topic = s
        .topics
        .iter()
        .find(|t| t.name == "/planner/markers")
        .expect("the demo's markers");
    let times: Vec<u64> = topic
        .connections
        .iter()
        .flat_map(|&c| tables.per_connection[c].iter().map(|e| e.time_ns))
        .collect();
    let cancel = AtomicBool::new(false);
    let layers = vec![Layer::new("/planner/markers", Kind::Markers, 0)];
    let mut b = Builder::new(bag.clone(), tables.clone(), Some(tf.clone()));
    let first = b.build(
        &request(start + 500_000_000, "map", layers.clone()),
        &cancel,
    );
    assert!(first.replayed >= 1, "{:?}", first.status);
    let mut steps = 0;
    while b.warm(&cancel) {
        steps += 1;
        assert!(steps < 10_000, "the warm-up does not end");
    }
    assert!(steps >= 1);
    let t = end - 100_000_000;
    let req = request(t, "map", layers.clone());
    let got = b.build(&req, &cancel);
    let mut fresh = Builder::new(bag, tables, Some(tf));
    let want = fresh.build(&req, &cancel);
    let within = |ns: u64| times.iter().filter(|&&x| x <= t && x + ns > t).count();
    assert_eq!(want.replayed, times.iter().filter(|&&x| x <= t).count());
    assert!(
        got.replayed <= within(1_100_000_000) && got.replayed * 5 < want.replayed,
        "read {} marker messages after warming up, {} from scratch",
        got.replayed,
        want.replayed
    );
    assert_eq!(drawn(&got, 1), drawn(&want, 1));
    assert!(got.status[0].text.ends_with(" markers") && !got.solids.is_empty());
}

/// Painting a layer by another field, another point size or in another fixed frame reads no
/// message again: the scene holds the very points the last one held (the same allocation),
/// painted and placed anew, and the colours are the new field's.
#[test]
fn repainting_and_moving_read_nothing_again() {
    use std::sync::Arc;
    let (bag, tables, tf, _dir) = demo(12, "scene-repaint");
    let t = bag.summary().start_ns.unwrap() + 9_000_000_000;
    let cancel = AtomicBool::new(false);
    let mut b = Builder::new(bag, tables, Some(tf));
    let mut layer = Layer::new("/lidar/points", Kind::Cloud2, 0);
    layer.decay_s = 2.0;
    let first = b.build(&request(t, "map", vec![layer.clone()]), &cancel);
    assert!(first.clouds.len() >= 5, "{:?}", first.status);
    assert!(first.clouds[0].points.column("intensity").is_some());
    for (paint, size, fixed) in [
        ("intensity", 3.0, "map"),
        ("x", 3.0, "map"),
        ("", 7.0, "odom"),
        ("z", 2.0, "base_link"),
    ] {
        let mut l = layer.clone();
        l.paint = paint.into();
        l.point_size = size;
        let s = b.build(&request(t, fixed, vec![l]), &cancel);
        assert_eq!(s.clouds.len(), first.clouds.len());
        for (a, c) in first.clouds.iter().zip(&s.clouds) {
            assert!(Arc::ptr_eq(&a.points, &c.points), "{paint}: read again");
            assert_eq!(a.id, c.id);
            assert_eq!(c.size, size);
        }
        // The colours are those of the field painted by, over its range across the clouds.
        let c = &s.clouds[0];
        match paint {
            "intensity" => {
                let col = c.points.column("intensity").unwrap();
                let (lo, hi) = s.status[0].range.unwrap();
                let all: Vec<f32> = s
                    .clouds
                    .iter()
                    .flat_map(|c| c.points.columns[col].1.iter().copied())
                    .collect();
                assert_eq!(lo, all.iter().copied().fold(f32::INFINITY, f32::min));
                assert_eq!(hi, all.iter().copied().fold(f32::NEG_INFINITY, f32::max));
                let v = c.points.columns[col].1[0];
                let [r, g, bl] = bagscope_ops::media::image::turbo((v - lo) / (hi - lo));
                assert_eq!(c.color(0), [r, g, bl, 255]);
            }
            "" => assert_eq!(c.color(0), layer.color),
            _ => assert!(s.status[0].range.is_some()),
        }
    }
}
