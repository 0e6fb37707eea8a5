//! The crates keep their layers and their weight: each depends only on the bagscope crates
//! below it (reader → operations, live → app → the `bagscope` binary; the AV1 encoder a leaf
//! under operations), and the reader, the
//! crate a Rust user adds to read recordings, stays small and free of the GUI, the command
//! line, DDS, Parquet and an async runtime.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Each crate of `crates/` and the bagscope crates it may depend on.
const ALLOWED: &[(&str, &[&str])] = &[
    ("bagscope-reader", &[]),
    ("bagscope-av1enc", &[]),
    ("bagscope-ops", &["bagscope-reader", "bagscope-av1enc"]),
    ("bagscope-live", &["bagscope-reader"]),
    (
        "bagscope-app",
        &["bagscope-reader", "bagscope-ops", "bagscope-live"],
    ),
];

/// The bagscope crates named in the `[dependencies]` table of a Cargo.toml.
fn bagscope_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_deps = l == "[dependencies]";
            continue;
        }
        if in_deps && l.starts_with("bagscope-") {
            let name: String = l
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-')
                .collect();
            out.insert(name);
        }
    }
    out
}

#[test]
fn each_crate_depends_only_on_the_crates_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = BTreeSet::new();
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let Some((_, allowed)) = ALLOWED.iter().find(|(n, _)| *n == name) else {
            panic!("crates/{name} has no place in this test's layers");
        };
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for dep in bagscope_dependencies(&manifest) {
            assert!(
                allowed.contains(&dep.as_str()),
                "crates/{name} depends on {dep}, which is not below it"
            );
        }
        seen.insert(name);
    }
    assert_eq!(seen.len(), ALLOWED.len(), "a crate of this test is gone");
}

#[test]
fn the_reader_has_a_small_dependency_tree() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "bagscope-reader",
            "--no-default-features",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    for banned in [
        "egui",
        "eframe",
        "clap",
        "rustdds",
        "parquet",
        "tokio",
        "arrow-array",
        "image",
    ] {
        assert!(
            !names.contains(banned),
            "the reader depends on {banned} (through {names:?})"
        );
    }
    assert!(
        names.len() <= 60,
        "the reader's tree has {} crates, over 60: {names:?}",
        names.len()
    );
}

/// Every package of the lock file carries a licence `deny.toml` allows (an `OR` needs one
/// allowed alternative, an `AND` every part), as `cargo deny check licenses` would say
/// (`cargo deny` itself fetches its advisory database from the network, which CI does not
/// reach; this reads the same licences from `cargo metadata`). Every package of every
/// platform must be in cargo's cache for that, which a bare clone's `cargo test` does not
/// fetch: it runs under `cargo xtask test unit` (the `external-tests` feature), as in CI.
#[test]
#[cfg_attr(
    not(feature = "external-tests"),
    ignore = "needs every package of the lock file in cargo's cache: cargo xtask test unit"
)]
fn every_dependency_has_a_licence_deny_toml_allows() {
    let root = env!("CARGO_MANIFEST_DIR");
    let deny = std::fs::read_to_string(format!("{root}/deny.toml")).unwrap();
    let list = &deny[deny.find("allow = [").unwrap()..];
    let list = &list[..list.find(']').unwrap()];
    let allowed: BTreeSet<&str> = list
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
        .collect();
    assert!(
        allowed.contains("BSD-2-Clause") && allowed.len() > 10,
        "{allowed:?}"
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut seen = 0;
    for p in meta["packages"].as_array().unwrap() {
        // The workspace's own packages (no source) are this licence.
        if p["source"].is_null() {
            continue;
        }
        let name = p["name"].as_str().unwrap();
        let licence = p["license"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no licence"));
        let ok = licence
            .replace(['(', ')'], "")
            .replace('/', " OR ")
            .split(" AND ")
            .all(|part| {
                part.split(" OR ").any(|alt| {
                    let alt = alt.trim();
                    allowed.contains(alt)
                        || alt
                            .split(" WITH ")
                            .next()
                            .is_some_and(|base| allowed.contains(base.trim()))
                })
            });
        assert!(
            ok,
            "{name}: licence {licence:?} is not allowed by deny.toml"
        );
        seen += 1;
    }
    assert!(seen > 300, "only {seen} packages");
    let codecs = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("rusty_h26"))
        })
        .count();
    assert!(codecs >= 2, "the video decoders are in the tree");
}

/// No source file of the workspace is over 800 lines (CONTRIBUTING's rule): a file that grows
/// past it is cut by concern.
#[test]
fn no_source_file_is_over_800_lines() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut stack: Vec<std::path::PathBuf> = [
        "src",
        "crates",
        "tests",
        "benches",
        "python/src",
        "fuzz",
        "xtask",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect();
    let (mut seen, mut long) = (0, Vec::new());
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                seen += 1;
                let n = std::fs::read_to_string(&p).unwrap().lines().count();
                if n > 800 {
                    long.push(format!(
                        "{}: {n} lines",
                        p.strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(seen > 200, "only {seen} source files found");
    assert!(long.is_empty(), "over 800 lines:\n{}", long.join("\n"));
}
