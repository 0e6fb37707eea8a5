//! `cargo xtask dist [--dev]`: a release's files in `dist/`: the Python wheel (the module, the
//! command line and the app in one native module), a `.deb` (the executable, its desktop
//! entry, the recordings' content types and the icons), a `.tar.gz` of the executable with
//! the same desktop files, and `SHA256SUMS`. `--dev` packages the dev profile's build (what
//! CI tests install; the release profile takes four times as long to build).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, String>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Runs `cmd`, failing with what it printed.
fn sh(cmd: &mut Command) -> Result<String> {
    eprintln!("xtask: {cmd:?}");
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The workspace's version (`[workspace.package] version`).
fn version(root: &Path) -> Result<String> {
    let toml = fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let section = toml
        .split("[workspace.package]")
        .nth(1)
        .ok_or("no [workspace.package] in Cargo.toml")?;
    section
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim().trim_matches('"').to_string())
        .ok_or_else(|| "no version in [workspace.package]".into())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(d) = to.parent() {
        fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("{} → {}: {e}", from.display(), to.display()))
}

/// The desktop files under `prefix` (`usr` of a package, or a tarball's folder): the
/// executable, the desktop entry, the content types, the icons.
/// `exec`: the desktop entry's command (the package's absolute path: a `bagscope` earlier on
/// PATH, such as a pip install's, is not the one a double-click should start).
fn install_tree(root: &Path, exe: &Path, prefix: &Path, exec: &str) -> Result<()> {
    let linux = root.join("packaging/linux");
    let bin = prefix.join("bin/bagscope");
    copy(exe, &bin)?;
    // The debug information out (symbols stay, for backtraces' function names).
    sh(Command::new("strip").arg("--strip-debug").arg(&bin))?;
    let entry = fs::read_to_string(linux.join("bagscope.desktop")).map_err(|e| e.to_string())?;
    let apps = prefix.join("share/applications");
    fs::create_dir_all(&apps).map_err(|e| e.to_string())?;
    fs::write(
        apps.join("bagscope.desktop"),
        entry.replace("Exec=bagscope ", &format!("Exec={exec} ")),
    )
    .map_err(|e| e.to_string())?;
    copy(
        &linux.join("bagscope-mime.xml"),
        &prefix.join("share/mime/packages/bagscope.xml"),
    )?;
    let icons = linux.join("icons/hicolor");
    for size in fs::read_dir(&icons).map_err(|e| format!("{}: {e}", icons.display()))? {
        let size = size.map_err(|e| e.to_string())?.file_name();
        copy(
            &icons.join(&size).join("apps/bagscope.png"),
            &prefix
                .join("share/icons/hicolor")
                .join(&size)
                .join("apps/bagscope.png"),
        )?;
    }
    Ok(())
}

/// The Debian package's maintainer scripts: the databases the files above feed, updated on
/// install and removal (dpkg's triggers of shared-mime-info and desktop-file-utils do it too
/// where those are installed; these make it immediate).
const POSTINST: &str = "#!/bin/sh
set -e
if command -v update-mime-database >/dev/null 2>&1; then update-mime-database /usr/share/mime; fi
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true; fi
exit 0
";

fn deb(root: &Path, exe: &Path, version: &str, dist: &Path, dev: bool) -> Result<PathBuf> {
    let stage = root.join("target/dist-deb");
    let _ = fs::remove_dir_all(&stage);
    install_tree(root, exe, &stage.join("usr"), "/usr/bin/bagscope")?;
    let doc = stage.join("usr/share/doc/bagscope");
    fs::create_dir_all(&doc).map_err(|e| e.to_string())?;
    fs::write(
        doc.join("copyright"),
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
         Upstream-Name: bagscope\n\nFiles: *\nLicense: MIT or Apache-2.0\n",
    )
    .map_err(|e| e.to_string())?;
    let size_kb = sh(Command::new("du").args(["-sk"]).arg(stage.join("usr")))?
        .split_whitespace()
        .next()
        .unwrap_or("0")
        .to_string();
    let control = stage.join("DEBIAN");
    fs::create_dir_all(&control).map_err(|e| e.to_string())?;
    fs::write(
        control.join("control"),
        format!(
            "Package: bagscope\nVersion: {version}\nArchitecture: amd64\nSection: science\n\
             Priority: optional\nInstalled-Size: {size_kb}\n\
             Maintainer: bagscope developers <bagscope@localhost>\n\
             Depends: libc6 (>= 2.31), libgcc-s1\n\
             Recommends: libgl1, libegl1, libxkbcommon0, libxkbcommon-x11-0, libx11-6, libxcursor1, \
             libxrandr2, libxi6, shared-mime-info, desktop-file-utils\n\
             Description: viewer and command line for robot recordings\n \
             See, replay and analyse ROS 1 bags, rosbag2 recordings (SQLite, MCAP) and MCAP\n \
             files: a desktop app with a timeline, plots, images and 3D, and a command line\n \
             (info, echo, csv, export, play, record, serve to Foxglove clients).\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    for script in ["postinst", "postrm"] {
        let p = control.join(script);
        fs::write(&p, POSTINST).map_err(|e| e.to_string())?;
        sh(Command::new("chmod").arg("0755").arg(&p))?;
    }
    let out = dist.join(format!("bagscope_{version}_amd64.deb"));
    // xz for a release; gzip at its fastest for CI's dev build (150 MB of executable).
    let z: &[&str] = if dev { &["-Zgzip", "-z1"] } else { &["-Zxz"] };
    sh(Command::new("dpkg-deb")
        .arg("--build")
        .arg("--root-owner-group")
        .args(z)
        .arg(&stage)
        .arg(&out))?;
    Ok(out)
}

fn tarball(root: &Path, exe: &Path, version: &str, dist: &Path) -> Result<PathBuf> {
    let name = format!("bagscope-{version}-x86_64-linux");
    let stage = root.join("target/dist-tar");
    let _ = fs::remove_dir_all(&stage);
    install_tree(root, exe, &stage.join(&name), "bagscope")?;
    copy(
        &root.join("README.md"),
        &stage.join(&name).join("README.md"),
    )?;
    let out = dist.join(format!("{name}.tar.gz"));
    sh(Command::new("tar")
        .arg("czf")
        .arg(&out)
        .arg("-C")
        .arg(&stage)
        .arg(&name))?;
    Ok(out)
}

fn wheel(root: &Path, dist: &Path, dev: bool) -> Result<PathBuf> {
    let before: Vec<_> = list(dist);
    let mut c = Command::new("maturin");
    c.args(["build", "--quiet", "-m"])
        .arg(root.join("python/Cargo.toml"))
        .arg("--out")
        .arg(dist);
    c.args(if dev {
        &["--profile", "dev"][..]
    } else {
        &["--release"][..]
    });
    sh(&mut c)?;
    list(dist)
        .into_iter()
        .find(|p| !before.contains(p) && p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| "maturin wrote no wheel".into())
}

fn list(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// `cargo xtask dist [--dev]`.
pub fn dist(dev: bool) -> Result<()> {
    let root = root();
    let version = version(&root)?;
    let dist = root.join("dist");
    let _ = fs::remove_dir_all(&dist);
    fs::create_dir_all(&dist).map_err(|e| e.to_string())?;
    let exe = root.join(if dev {
        "target/debug/bagscope"
    } else {
        "target/release/bagscope"
    });
    // A dev build already there is packaged as it is: the test build's (`cargo xtask test`)
    // has the dev-dependencies' features, which `cargo build` alone would rebuild without.
    if !dev || !exe.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .current_dir(&root)
            .args(["build", "--bin", "bagscope"]);
        if !dev {
            build.arg("--release");
        }
        sh(&mut build)?;
    }
    let files = [
        wheel(&root, &dist, dev)?,
        deb(&root, &exe, &version, &dist, dev)?,
        tarball(&root, &exe, &version, &dist)?,
    ];
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let sums = sh(Command::new("sha256sum").current_dir(&dist).args(&names))?;
    fs::write(dist.join("SHA256SUMS"), &sums).map_err(|e| e.to_string())?;
    for f in &files {
        let mb = fs::metadata(f).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        eprintln!("xtask: {} ({mb:.1} MB)", f.display());
    }
    Ok(())
}
