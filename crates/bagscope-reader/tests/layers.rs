//! The layering of the reader holds: storage → definition → encoding → the open recording →
//! what reads all of it (check, series), with the open options and errors below them all. No file may name (`crate::…`, `use crate::{…}`, `super::…` out of its
//! folder) a module of a higher layer. Comments and unit-test modules (`mod tests` and
//! `tests.rs` files) are not read. Between
//! the crates (operations, live, app, command line) the compiler keeps the layers
//! (`tests/unit/crates.rs` at the workspace root checks which crate may depend on which).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// Each top-level module's layer; a file's own is its top-level folder or file.
const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("options", 0),
    ("storage", 1),
    ("definition", 2),
    ("encoding", 3),
    ("expr", 3),
    ("bag", 4),
    ("check", 5),
    ("series", 5),
];

/// The items the crate root re-exports, by the module that defines them.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("Bag", "bag"),
    ("Bytes", "bag"),
    ("Filter", "bag"),
    ("Chunk", "storage"),
    ("ChunkKind", "storage"),
    ("Connection", "storage"),
    ("IndexEntry", "storage"),
    ("Message", "storage"),
    ("MessageRef", "storage"),
    ("MessageTables", "storage"),
    ("Summary", "storage"),
    ("Topic", "storage"),
    ("Version", "storage"),
    ("Error", "error"),
    ("Result", "error"),
    ("Compression", "storage"),
    ("BagWriter", "storage"),
    ("ConnectionSpec", "storage"),
    ("WriteOptions", "storage"),
    ("OpenOptions", "options"),
    ("IndexCache", "options"),
    ("machine_threads", "options"),
];

fn layer(module: &str) -> Option<u8> {
    let m = ROOT_ITEMS
        .iter()
        .find(|(item, _)| *item == module)
        .map_or(module, |(_, m)| m);
    LAYERS.iter().find(|(n, _)| *n == m).map(|(_, l)| *l)
}

/// The text a file's code holds: no comment lines or trailing comments, nothing from its
/// unit-test module on.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" // ").next().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// The top-level modules a file names from the crate root.
fn named_modules(module_path: &[String], code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(inner) = rest.strip_prefix('{') {
            // `use crate::{a, b::c, D}`: each entry's first name.
            let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
            for part in inner.split(',') {
                let n = ident(part.trim());
                if !n.is_empty() {
                    out.push(n);
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    // `super::` out of a top-level module's own file or folder reaches the crate root.
    for (i, _) in code.match_indices("super::") {
        if i >= 2 && &code[i - 2..i] == "::" {
            continue;
        }
        let mut rest = &code[i..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            up += 1;
            rest = r;
        }
        if up >= module_path.len() {
            out.push(ident(rest));
        }
    }
    out
}

/// The module path of a file under `src/` (`storage/ros1/scan.rs` → storage, ros1, scan;
/// `storage/mod.rs` → storage).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every import of a higher layer in `files` (path under `src/`, text).
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, text) in files {
        let path = module_path(rel);
        let Some(own) = path.first().and_then(|m| layer(m)) else {
            continue;
        };
        for m in named_modules(&path, &code(text)) {
            if let Some(l) = layer(&m) {
                if l > own {
                    out.push(format!(
                        "src/{} (layer {own}, {}) names {m} (layer {l})",
                        rel.display(),
                        path[0]
                    ));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            // A module's unit tests in a file of their own.
            && p.file_name().is_some_and(|n| n != "tests.rs")
        {
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

#[test]
fn no_module_imports_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    // Every top-level module has its layer (a new one must be placed).
    for (rel, _) in &files {
        let top = module_path(rel)[0].clone();
        if top != "lib" && top != "main" {
            assert!(layer(&top).is_some(), "src/{} has no layer", rel.display());
        }
    }
    // Every item the crate root re-exports is placed.
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    for line in code(&lib).split(';') {
        if let Some(items) = line.trim().strip_prefix("pub use ") {
            let items = items
                .rsplit_once('{')
                .map_or(items, |(_, i)| i.trim_end_matches('}'));
            let items = items.rsplit("::").next().unwrap_or(items);
            for item in items.split(',') {
                let item = item.trim();
                if !item.is_empty() {
                    assert!(
                        ROOT_ITEMS.iter().any(|(n, _)| *n == item),
                        "lib.rs re-exports {item}, which this test does not place"
                    );
                }
            }
        }
    }
    let v = violations(&files);
    assert!(
        v.is_empty(),
        "imports that point up a layer:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_check_finds_what_points_up() {
    let f = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let files = [
        f("storage/x.rs", "use crate::check::check;\n"),
        f("storage/ros1/y.rs", "use crate::{error::Error, Bag, options};\n"),
        f("definition/msg.rs", "fn f(v: &crate::encoding::Value) {}\n"),
        f("bag.rs", "use super::series::Thing;\n"),
        f("storage/ros1/z.rs", "use super::super::super::check;\n"),
        // Not imports: comments, tests, a lower layer, `super::` within the folder.
        f("storage/a.rs", "// crate::ops\n/// [`crate::Bag`]\nuse crate::error::Error; // crate::app\n#[cfg(test)]\nmod tests {\n use crate::check::check;\n}\n"),
        f("storage/ros1/b.rs", "use super::super::compression;\n"),
        f("check.rs", "use crate::bag::Bag;\nuse crate::encoding::Plan;\n"),
    ];
    assert_eq!(
        violations(&files),
        [
            "src/bag.rs (layer 4, bag) names series (layer 5)",
            "src/definition/msg.rs (layer 2, definition) names encoding (layer 3)",
            "src/storage/ros1/y.rs (layer 1, storage) names Bag (layer 4)",
            "src/storage/ros1/z.rs (layer 1, storage) names check (layer 5)",
            "src/storage/x.rs (layer 1, storage) names check (layer 5)",
        ]
    );
}
