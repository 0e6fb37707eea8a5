//! The documentation holds: every relative link of the README and the `docs/` book resolves,
//! every page of `docs/` is in the book's table of contents, and the command-line reference
//! (`docs/cli-reference.md`) is what `bagscope --help` and each verb's `--help` print, so it
//! cannot drift. `BAGSCOPE_BLESS=1 cargo test --test unit docs::` (or `cargo xtask docs`)
//! writes the reference anew. Every file path written in the pages about the code exists.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files people read: the front door, the pages beside it, the book.
fn pages() -> Vec<PathBuf> {
    let r = root();
    let mut out: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "TESTING.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|p| r.join(p))
    .collect();
    let mut stack = vec![r.join("docs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The targets of the Markdown links and images of `text` (`[x](target)`), outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code spans are not links.
        let line: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut n = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            let target = target.split_whitespace().next().unwrap_or("");
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let path = target.split('#').next().unwrap_or(target);
            n += 1;
            if !page.parent().unwrap().join(path).exists() {
                broken.push(format!(
                    "{}: {target}",
                    page.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(n > 20, "only {n} relative links found: is the scan right?");
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let docs = root().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = links(&summary);
    for page in pages() {
        let Ok(rel) = page.strip_prefix(&docs) else {
            continue;
        };
        let rel = rel.to_string_lossy().to_string();
        if rel == "SUMMARY.md" {
            continue;
        }
        assert!(
            listed.contains(&rel),
            "docs/{rel} is not in docs/SUMMARY.md"
        );
    }
}

/// The verbs `bagscope --help` lists (the hidden ones are not).
fn verbs(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for line in help.lines() {
        if line.starts_with("Commands:") {
            on = true;
            continue;
        }
        if on {
            if !line.starts_with("  ") {
                break;
            }
            if let Some(v) = line.split_whitespace().next() {
                if v != "help" {
                    out.push(v.to_string());
                }
            }
        }
    }
    out
}

fn help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "bagscope {args:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// The reference as the binary gives it.
fn reference() -> String {
    let top = help(&["--help"]);
    let verbs = verbs(&top);
    assert!(verbs.len() >= 10, "verbs found: {verbs:?}");
    let mut out = String::from(
        "# Command-line reference\n\n\
         Every verb's `--help`, as the binary prints it (written by `cargo xtask docs`; a test\n\
         fails when it differs from the binary). The guide to the command line is\n\
         [cli.md](cli.md).\n\n",
    );
    out.push_str("## Contents\n\n");
    for v in &verbs {
        out.push_str(&format!("- [`bagscope {v}`](#bagscope-{v})\n"));
    }
    out.push_str(&format!("\n## bagscope\n\n```text\n{}```\n", top));
    for v in &verbs {
        out.push_str(&format!(
            "\n## bagscope {v}\n\n```text\n{}```\n",
            help(&[v, "--help"])
        ));
    }
    out
}

#[test]
fn the_cli_reference_is_what_the_binary_says() {
    let path = root().join("docs/cli-reference.md");
    let want = reference();
    if std::env::var_os("BAGSCOPE_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/cli-reference.md differs from the binary's --help: run `cargo xtask docs`"
    );
}

#[test]
fn links_are_found_outside_code_only() {
    let text = "see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![i](x/i.png \"t\")";
    assert_eq!(links(text), ["a.md", "x/i.png \"t\""]);
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").is_dir());
}

/// The repository paths (`crates/…`, `tests/…`, `scripts/…`, …, ending in a file extension)
/// written in `text`, wherever they stand: code spans, prose, comments.
fn repo_paths(text: &str) -> Vec<String> {
    const ROOTS: [&str; 10] = [
        "crates/",
        "tests/",
        "src/",
        "scripts/",
        "docs/",
        "python/",
        "xtask/",
        "benches/",
        "fuzz/",
        "packaging/",
    ];
    const EXTS: [&str; 9] = [
        ".rs", ".py", ".sh", ".md", ".toml", ".js", ".yaml", ".json", ".msgs",
    ];
    let path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (i, _) in text.char_indices() {
        let before = text[..i].chars().next_back();
        // A path starts at a root, not in the middle of a longer path or word.
        if before.is_some_and(|c| path_char(c) || c == '/') {
            continue;
        }
        let rest = &text[i..];
        if !ROOTS.iter().any(|r| rest.starts_with(r)) {
            continue;
        }
        let end = rest.find(|c: char| !path_char(c)).unwrap_or(rest.len());
        let p = rest[..end].trim_end_matches('.');
        if EXTS.iter().any(|x| p.ends_with(x)) {
            out.push(p.to_string());
        }
    }
    out
}

/// A path written in the docs exists: from the repository's root, or, for `src/…` in a page
/// about a crate, inside one of the crates.
fn path_exists(p: &str) -> bool {
    let r = root();
    if r.join(p).exists() {
        return true;
    }
    p.starts_with("src/")
        && [
            "bagscope-reader",
            "bagscope-ops",
            "bagscope-live",
            "bagscope-app",
        ]
        .iter()
        .any(|c| r.join("crates").join(c).join(p).exists())
}

/// Every file path written in the pages that describe the code (ARCHITECTURE, CONTRIBUTING,
/// TESTING, the book less its dated benchmark pages, which keep the paths of their day),
/// in `.ci/run` and in the crates' own docs (`lib.rs`) exists: a move or a rename that leaves
/// one behind fails here.
#[test]
fn every_file_path_in_the_docs_exists() {
    let r = root();
    let mut files: Vec<PathBuf> = pages()
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(&r).unwrap();
            !rel.starts_with("docs/benchmarks")
                && !rel.starts_with("README.md")
                && !rel.starts_with("CHANGELOG.md")
        })
        .collect();
    files.push(r.join(".ci/run"));
    for c in [
        "bagscope-reader",
        "bagscope-ops",
        "bagscope-live",
        "bagscope-app",
    ] {
        files.push(r.join("crates").join(c).join("src/lib.rs"));
        files.push(r.join("crates").join(c).join("README.md"));
    }
    files.push(r.join("src/lib.rs"));
    let mut stale = Vec::new();
    let mut seen = 0;
    for f in files.iter().filter(|f| f.exists()) {
        let text = std::fs::read_to_string(f).unwrap();
        for p in repo_paths(&text) {
            seen += 1;
            if !path_exists(&p) {
                stale.push(format!("{}: {p}", f.strip_prefix(&r).unwrap().display()));
            }
        }
    }
    assert!(seen > 100, "only {seen} paths found: the scan is broken");
    assert!(
        stale.is_empty(),
        "paths that do not exist:\n{}",
        stale.join("\n")
    );
}

#[test]
fn paths_are_found_as_written() {
    let text = "see `crates/bagscope-ops/src/tf.rs`, tests/unit/docs.rs. And \
                (scripts/bench/ros1.py) but not xsrc/a.rs nor docs/ alone nor https://x/src/b.rs";
    assert_eq!(
        repo_paths(text),
        [
            "crates/bagscope-ops/src/tf.rs",
            "tests/unit/docs.rs",
            "scripts/bench/ros1.py"
        ]
    );
}
