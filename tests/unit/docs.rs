//! The documentation holds: every relative link of the README and the `docs/` book resolves,
//! every page of `docs/` is in the book's table of contents, and the command-line reference
//! (`docs/cli-reference.md`) is what `bagscope --help` and each verb's `--help` print, so it
//! cannot drift. `BAGSCOPE_BLESS=1 cargo test --test unit docs::` (or `cargo xtask docs`)
//! writes the reference anew.

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
