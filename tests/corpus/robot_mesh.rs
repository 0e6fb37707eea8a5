//! Robot meshes: every STL (binary and text) and COLLADA file pybullet's `pybullet_data` ships
//! and the OBJ meshes of its robots, read by bagscope and by trimesh (with pycollada for
//! COLLADA): the same number of triangles and the same box round them (a COLLADA file in
//! metres and z up, as its asset declares). Damaged files are refused with what is wrong.

use std::path::{Path, PathBuf};
use std::process::Command;

use bagscope_ops::spatial::robot::mesh;

use super::robot::pybullet_data;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn meshes_read_as_trimesh_reads_them() {
    let data = pybullet_data();
    let mut all = Vec::new();
    files(&data, &mut all);
    let ext = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase()
    };
    let small = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.len() < 2 << 20);
    // The robots' OBJ meshes (not the thousand random objects beside them).
    let robots = [
        "kuka_iiwa",
        "franka_panda",
        "xarm",
        "husky",
        "quadruped",
        "laikago",
        "r2d2",
        "racecar",
        "mini_cheetah",
        "a1",
        "aliengo",
        "kiva_shelf",
    ];
    let picked: Vec<PathBuf> = all
        .into_iter()
        .filter(|p| small(p))
        .filter(|p| match ext(p).as_str() {
            "stl" | "dae" => true,
            "obj" => p
                .strip_prefix(&data)
                .ok()
                .and_then(|r| r.components().next())
                .is_some_and(|c| robots.iter().any(|r| c.as_os_str() == *r)),
            _ => false,
        })
        .collect();
    let count = |e: &str| picked.iter().filter(|p| ext(p) == e).count();
    assert!(
        count("stl") >= 60 && count("dae") >= 10 && count("obj") >= 40,
        "{} STL, {} DAE, {} OBJ files",
        count("stl"),
        count("dae"),
        count("obj")
    );
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/trimesh_meshes.py"
        ))
        .args(&picked)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "trimesh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut compared = 0;
    let mut triangles = 0;
    for p in &picked {
        let key = p.to_string_lossy();
        let want = &peer[key.as_ref()];
        let ours = mesh::load(p);
        let Some(w) = want.as_array() else {
            // trimesh refuses it: so must bagscope, with a reason.
            assert!(
                ours.is_err(),
                "{key}: trimesh says {want}, bagscope reads it"
            );
            continue;
        };
        let m = ours.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            m.triangles() as u64,
            w[0].as_u64().unwrap(),
            "{key}: triangles"
        );
        let (lo, hi) = m.bounds().unwrap();
        for (got, want) in [(lo, &w[1]), (hi, &w[2])] {
            for k in 0..3 {
                let want = want[k].as_f64().unwrap();
                let d = (f64::from(got[k]) - want).abs();
                assert!(
                    d <= 1e-5 * want.abs().max(1.0),
                    "{key}: box {lo:?}..{hi:?}, trimesh {w:?}"
                );
            }
        }
        compared += 1;
        triangles += m.triangles();
    }
    assert!(compared >= 110, "{compared} meshes compared");
    println!("{compared} meshes, {triangles} triangles, as trimesh reads them");
}

#[test]
fn damaged_meshes_are_refused_with_what_is_wrong() {
    let dir = crate::common::temp_dir("robot-mesh-bad");
    let put = |name: &str, b: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    // A binary STL that claims more triangles than it holds.
    let mut b = vec![0u8; 80];
    b.extend_from_slice(&1000u32.to_le_bytes());
    b.extend_from_slice(&[0u8; 50]);
    let e = mesh::load(&put("short.stl", &b)).unwrap_err();
    assert!(e.contains("short.stl") && e.contains("not an STL"), "{e}");
    let e = mesh::load(&put("bad.obj", b"v 0 0 0\nv 1 0 0\nf 1 2 7\n")).unwrap_err();
    assert!(e.contains("line 3") && e.contains("face index 7"), "{e}");
    let e = mesh::load(&put("bad.dae", b"<COLLADA><library_geometries>")).unwrap_err();
    assert!(e.contains("bad.dae") && e.contains("not closed"), "{e}");
    let e = mesh::load(&put("x.ply", b"ply\n")).unwrap_err();
    assert!(
        e.contains(".ply") && e.contains("STL, OBJ and COLLADA"),
        "{e}"
    );
    // A mesh of absurd size (a sparse file: nothing is written to disk) is refused unread.
    let huge = dir.join("huge.stl");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(mesh::MAX_MESH_BYTES + 1)
        .unwrap();
    let e = mesh::load(&huge).unwrap_err();
    assert!(e.contains("huge.stl") && e.contains("more than the"), "{e}");
    let e = mesh::load(&dir.join("missing.stl")).unwrap_err();
    assert!(e.contains("missing.stl"), "{e}");
    // package:// on an empty search path says so.
    let e = mesh::resolve("package://robot/meshes/a.stl", None, &[]).unwrap_err();
    assert!(
        e.contains("package robot not found") && e.contains("--msg-path"),
        "{e}"
    );
}
