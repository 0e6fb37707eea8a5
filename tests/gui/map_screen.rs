//! The map as a user sees it: the real app under Xvfb (its own display), a layout opening a
//! map panel at zoom 18 over a PMTiles archive of tiles whose pixels say where they are
//! (tests/py/map_tiles.py), and a screenshot (xwd, read with ffmpeg). The position at the
//! playhead, drawn as a disc, sits over the tile pixel `mercantile` computes for that fix,
//! within a pixel (0.19 and 0.02 px off when written).

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use crate::screen::Screen;

const W: usize = 1280;
const H: usize = 900;

fn at(img: &[u8], x: usize, y: usize) -> [u8; 3] {
    let i = (y * W + x) * 3;
    [img[i], img[i + 1], img[i + 2]]
}

fn magenta(p: [u8; 3]) -> bool {
    p[0] > 200 && p[1] < 60 && p[2] > 200
}

/// The middle of the largest magenta disc: the pixel with the most magenta within 5 pixels.
fn disc(img: &[u8]) -> Option<(f64, f64)> {
    let mut best = (0usize, 0usize, 0usize);
    for y in 5..H - 5 {
        for x in 5..W - 5 {
            if !magenta(at(img, x, y)) {
                continue;
            }
            let mut n = 0;
            for dy in -5i32..=5 {
                for dx in -5i32..=5 {
                    if dx * dx + dy * dy <= 25
                        && magenta(at(img, (x as i32 + dx) as usize, (y as i32 + dy) as usize))
                    {
                        n += 1;
                    }
                }
            }
            if n > best.2 {
                best = (x, y, n);
            }
        }
    }
    if best.2 < 60 {
        return None;
    }
    // The centroid of the magenta pixels around it.
    let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
    for dy in -7i32..=7 {
        for dx in -7i32..=7 {
            let (x, y) = ((best.0 as i32 + dx) as usize, (best.1 as i32 + dy) as usize);
            if dx * dx + dy * dy <= 49 && magenta(at(img, x, y)) {
                sx += x as f64 + 0.5;
                sy += y as f64 + 0.5;
                n += 1.0;
            }
        }
    }
    Some((sx / n, sy / n))
}

#[test]
fn the_playhead_fix_sits_on_the_tile_pixel_mercantile_computes() {
    let dir = common::temp_dir("map-screen");
    // Three fixes some 60 m apart; the playhead starts at the first.
    let rec = dir.join("gps.bag");
    let (lat0, lon0) = (47.376_123_4, 8.550_345_6);
    let t0 = 1_700_000_000_000_000_000;
    common::gps::write_fixes(
        &rec,
        &[
            (t0, 0, lat0, lon0, 0.0),
            (t0 + 1_000_000_000, 0, lat0 + 4e-4, lon0 + 2e-4, 0.0),
            (t0 + 2_000_000_000, 0, lat0 + 1e-4, lon0 + 7e-4, 0.0),
        ],
    );
    let pm = dir.join("tiles.pmtiles");
    let made = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/map_tiles.py"
        ))
        .arg("pmtiles")
        .arg(&pm)
        .args(["18", "8.5470", "47.3745", "8.5540", "47.3780"])
        .status()
        .unwrap();
    assert!(made.success());
    let expect = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/map_tiles.py"
        ))
        .args(["expect", "18", &format!("{lat0},{lon0}")])
        .output()
        .unwrap();
    let e: serde_json::Value = serde_json::from_slice(&expect.stdout).unwrap();
    let e = &e[0];
    let want = (
        e["x"].as_f64().unwrap() * 256.0 + e["px"].as_f64().unwrap(),
        e["y"].as_f64().unwrap() * 256.0 + e["py"].as_f64().unwrap(),
    );
    let layout = dir.join("map.json");
    std::fs::write(
        &layout,
        serde_json::json!({
            "bagscope_layout": 1,
            "maps": [{
                "topics": ["/gps/fix"],
                "tiles": pm,
                "center": [lat0 + 2e-4, lon0 + 3e-4],
                "zoom": 18.0,
                "colours": {"/gps/fix": "#ff00ff"},
            }],
        })
        .to_string(),
    )
    .unwrap();
    let mut screen = Screen::new(W, H);
    screen.app(&[&rec, &"--layout", &layout], &dir.join("home"));
    // Each tile pixel around the disc says where it is; the disc's middle is where they put it.
    let code = |x: f64, y: f64| (((x as u64) % 16) * 16 + (y as u64) % 16) as u8;
    let tx = (want.0 / 256.0).floor();
    let ty = (want.1 / 256.0).floor();
    // Where the pixels around the disc say it is: tiles of the fix's zoom only (while they
    // load, the map shows the tiles of a lower zoom scaled up, whose codes are other tiles').
    let decode = |img: &[u8], c: (f64, f64)| {
        let mut got = Vec::new();
        for (dx, dy) in [
            (18, 0),
            (-18, 0),
            (0, 18),
            (0, -18),
            (14, 14),
            (-14, -14),
            (14, -14),
            (-14, 14),
        ] {
            let (sx, sy) = ((c.0 as i32 + dx) as usize, (c.1 as i32 + dy) as usize);
            let p = at(img, sx, sy);
            if magenta(p) || p[0] == p[1] && p[1] == p[2] {
                continue;
            }
            // The tile whose code the pixel has, next to the fix's.
            let mut tile = None;
            for ox in -1..=1 {
                for oy in -1..=1 {
                    let (x, y) = (tx + f64::from(ox), ty + f64::from(oy));
                    if code(x, y) == p[2] {
                        tile = Some((x, y));
                    }
                }
            }
            let Some((x, y)) = tile else { continue };
            let world = (
                x * 256.0 + f64::from(p[0]) + 0.5,
                y * 256.0 + f64::from(p[1]) + 0.5,
            );
            got.push((
                world.0 - (sx as f64 + 0.5 - c.0),
                world.1 - (sy as f64 + 0.5 - c.1),
            ));
        }
        got
    };
    // The disc, once the tiles of its zoom around it are in.
    let t0 = Instant::now();
    let got = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no map with its disc on the screen"
        );
        std::thread::sleep(Duration::from_millis(500));
        let Some(img) = screen.shot(&dir) else {
            continue;
        };
        let Some(c) = disc(&img) else { continue };
        let got = decode(&img, c);
        // All of them the same place (a stretched parent's pixel whose code happened to be a
        // neighbour's would not be).
        let agree = got.iter().all(|a| {
            got.iter()
                .all(|b| (a.0 - b.0).abs() <= 2.0 && (a.1 - b.1).abs() <= 2.0)
        });
        if got.len() >= 4 && agree {
            break got;
        }
    };
    assert!(got.len() >= 4, "tile pixels around the disc: {got:?}");
    let mean = (
        got.iter().map(|g| g.0).sum::<f64>() / got.len() as f64,
        got.iter().map(|g| g.1).sum::<f64>() / got.len() as f64,
    );
    println!(
        "disc at zoom-18 pixel {mean:?}, mercantile {want:?}: off by {:.2}, {:.2} px",
        mean.0 - want.0,
        mean.1 - want.1
    );
    assert!(
        (mean.0 - want.0).abs() <= 1.0 && (mean.1 - want.1).abs() <= 1.0,
        "the disc is at zoom-18 pixel {mean:?}, mercantile puts the fix at {want:?} ({got:?})"
    );
}
