//! Foxglove's own message paths against bagscope's parser, fetched at test time from the npm
//! registry (@foxglove/studio-base 1.48.0, never copied here): every path of Foxglove's
//! `parseRosPath` tests is accepted or refused as Foxglove's tests expect, with the topic they
//! expect, apart from a stated list (Foxglove's parser also accepts the half-typed paths its
//! autocomplete needs, and topics without a leading `/`); and every path of the Plot panel's
//! layouts in its stories parses and names its topic.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use crate::common;

const PACKAGE: &str = "@foxglove/studio-base@1.48.0";
const TESTS: &str = "package/src/components/MessagePathSyntax/parseRosPath.test.js";
const STORIES: &str = "package/src/panels/Plot/index.stories.js";

/// The package's two files, unpacked into `dir`.
fn fetch(dir: &Path) {
    let out = Command::new("npm")
        .args(["pack", PACKAGE, "--silent", "--pack-destination"])
        .arg(dir)
        .output()
        .expect("npm (Node.js) runs: .ci/run's machine has it");
    assert!(
        out.status.success(),
        "npm pack: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tgz = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let ok = Command::new("tar")
        .arg("xzf")
        .arg(dir.join(tgz))
        .arg("-C")
        .arg(dir)
        .args([TESTS, STORIES])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// A JavaScript string literal at the start of `s` (`"..."` with escapes, ``String.raw `...` ``
/// or `` `...` `` without escapes), and what follows it.
fn js_string(s: &str) -> Option<(String, &str)> {
    if let Some(raw) = s
        .strip_prefix("String.raw `")
        .or_else(|| s.strip_prefix('`'))
    {
        let end = raw.find('`')?;
        return Some((raw[..end].to_string(), &raw[end + 1..]));
    }
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => out.push(chars.next()?.1),
            c => out.push(c),
        }
    }
    None
}

/// What Foxglove's tests expect of a path: parsed with this topic, or refused.
#[derive(Debug, PartialEq)]
enum Want {
    Topic(String),
    Defined,
    Refused,
}

fn expectations(js: &str) -> Vec<(String, Want)> {
    let mut out = Vec::new();
    let mut rest = js;
    while let Some(i) = rest.find("expect(parseRosPath(") {
        rest = &rest[i + "expect(parseRosPath(".len()..];
        let Some((path, after)) = js_string(rest) else {
            continue;
        };
        let after = after.trim_start();
        let want = if after.starts_with(")).toBeUndefined()") {
            Want::Refused
        } else if after.starts_with(")).toBeDefined()") {
            Want::Defined
        } else if after.starts_with(")).toEqual({") {
            let t = &after[after.find("topicName: ").unwrap() + "topicName: ".len()..];
            Want::Topic(js_string(t).unwrap().0)
        } else {
            continue;
        };
        out.push((path, want));
    }
    out
}

#[test]
fn foxglove_parse_ros_path_tests_agree() {
    let d = common::temp_dir("foxglove-paths");
    fetch(&d);
    let js = std::fs::read_to_string(d.join(TESTS)).unwrap();
    let cases = expectations(&js);
    assert!(
        cases.len() >= 50,
        "{} paths found in Foxglove's tests",
        cases.len()
    );
    // Where bagscope differs, on purpose: Foxglove's parser accepts what its autocomplete
    // needs while a path is being typed (an empty name after `.`, `.@`, `{}`, a filter without
    // its comparison or field, `$` without a name), which bagscope answers with an error at that
    // place; and a topic without a leading `/` (`some_nice_topic`), which bagscope reads as a
    // path with no topic (a field), as its field paths always have.
    let differ = [
        "/topic.",
        "/topic.hi.",
        "/topic.hi.@",
        "/topic.foo{}",
        "/topic.foo{bar}",
        "/topic.foo{==1}",
        "/topic.foo{==-3}",
        "/topic.foo{bar==$}.a{bar==$my_var_1}",
        "some0/nice_topic.with[99].stuff[0]",
        "some_nice_topic",
    ];
    let mut failed = Vec::new();
    let mut agreed = 0;
    for (path, want) in &cases {
        let got = bagscope_reader::expr::parse_path(path);
        let same = match (want, &got) {
            (Want::Topic(t), Ok(p)) => &p.topic == t,
            (Want::Defined, Ok(_)) => true,
            (Want::Refused, Err(_)) => true,
            _ => false,
        };
        if same {
            agreed += 1;
            if differ.contains(&path.as_str()) {
                failed.push(format!("{path:?} now agrees: take it off the list"));
            }
        } else if !differ.contains(&path.as_str()) {
            failed.push(format!("{path:?}: Foxglove {want:?}, bagscope {got:?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(agreed >= 40, "{agreed} agreed");
}

#[test]
fn the_plot_layouts_of_foxglove_parse() {
    let d = common::temp_dir("foxglove-plot-paths");
    fetch(&d);
    let js = std::fs::read_to_string(d.join(STORIES)).unwrap();
    let mut paths = Vec::new();
    for key in ["value: ", "path: "] {
        let mut rest = js.as_str();
        while let Some(i) = rest.find(key) {
            rest = &rest[i + key.len()..];
            if let Some((p, _)) = js_string(rest) {
                if p.starts_with('/') {
                    paths.push(p);
                }
            }
        }
    }
    paths.sort();
    paths.dedup();
    assert!(paths.len() >= 10, "{paths:?}");
    for p in &paths {
        let e = bagscope_reader::expr::Expr::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        let topic = p[..p.find('.').unwrap_or(p.len())].to_string();
        assert_eq!(e.topics(), [topic.as_str()], "{p}");
    }
}
