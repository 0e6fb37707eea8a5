//! `bagscope gen`: the generated C++ (g++), Rust (rustc) and Python code is built and run on
//! real messages of ROS 1 and ROS 2 recordings, and every message it loads prints the same
//! fields and values as bagscope's own decoder.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::process::Command;

use bagscope_ops::gen::{generate, Lang};
use bagscope_reader::encoding::{to_json, Plan};
use bagscope_reader::{Bag, Filter};
use serde_json::Value;

/// Integers exactly, other numbers to float32 precision, everything else exactly.
fn same(a: &Value, b: &Value) -> bool {
    common::same_json(a, b)
}

/// Writes up to `per_topic` messages of every topic to `dir`, with a manifest line
/// `type cdr path` each, and returns the definitions, bagscope's JSON of each message in
/// manifest order, and what could not be written (a topic without a definition, a message
/// that does not decode), named.
fn dump(
    bag: &Bag,
    dir: &Path,
    per_topic: usize,
) -> (
    Vec<bagscope_reader::definition::msg::MsgDef>,
    Vec<String>,
    Vec<String>,
) {
    let s = bag.summary();
    let mut defs = Vec::new();
    let mut manifest = String::new();
    let mut want = Vec::new();
    let mut skipped = Vec::new();
    for t in &s.topics {
        let c = &s.connections[t.connections[0]];
        let plan = match Plan::for_connection(c, &[]) {
            Ok(p) => p,
            Err(e) => {
                skipped.push(format!("{}: {e}", t.name));
                continue;
            }
        };
        let f = Filter {
            connections: Some(vec![t.connections[0]]),
            ..Default::default()
        };
        for (i, m) in bag.messages(&f).unwrap().take(per_topic).enumerate() {
            let m = m.unwrap();
            let node = match plan.decode(&m.data) {
                Ok(n) => n,
                Err(e) => {
                    skipped.push(format!("{} message {i}: {e}", t.name));
                    continue;
                }
            };
            let p = dir.join(format!("{}-{i}.bin", t.name.replace('/', "_")));
            std::fs::write(&p, &*m.data).unwrap();
            manifest.push_str(&format!(
                "{} {} {}\n",
                c.datatype,
                u8::from(c.encoding == "cdr"),
                p.display()
            ));
            let mut j = String::new();
            to_json(&plan.def, &node.value, &mut j);
            want.push(j);
        }
        defs.push(plan.def.clone());
    }
    std::fs::write(dir.join("manifest.txt"), manifest).unwrap();
    (defs, want, skipped)
}

const CPP_MAIN: &str = r#"
#include "bagscope_msgs.hpp"
#include <fstream>
#include <iostream>
#include <sstream>
int main(int, char** argv) {
  std::ifstream m(argv[1]);
  std::string type, path; int cdr;
  while (m >> type >> cdr >> path) {
    std::ifstream f(path, std::ios::binary);
    std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::cout << bagscope::decode_json(type, cdr, reinterpret_cast<const uint8_t*>(b.data()), b.size()) << "\n";
  }
}
"#;

const RUST_MAIN: &str = r#"
#[path = "bagscope_msgs.rs"]
mod bagscope_msgs;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let manifest = std::fs::read_to_string(&args[1]).unwrap();
    for l in manifest.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        let data = std::fs::read(f[2]).unwrap();
        println!("{}", bagscope_msgs::decode_json(f[0], f[1] == "1", &data).unwrap());
    }
}
"#;

const PY_MAIN: &str = r#"
import sys
sys.path.insert(0, sys.argv[2])
import bagscope_msgs
for l in open(sys.argv[1]):
    t, cdr, p = l.split()
    print(bagscope_msgs.decode_json(t, cdr == '1', open(p, 'rb').read()))
"#;

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn check_lines(got: &str, want: &[String], what: &str) {
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), want.len(), "{what}: message count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g: Value =
            serde_json::from_str(g).unwrap_or_else(|e| panic!("{what} line {i}: {e}: {g}"));
        let w: Value = serde_json::from_str(w).unwrap();
        assert!(
            same(&g, &w),
            "{what}, message {i}:\n generated: {g}\n bagscope:  {w}"
        );
    }
}

#[test]
fn generated_code_loads_real_messages_like_bagscope() {
    let d = common::temp_dir("gen");
    let recordings = [
        common::corpus_dir().join("embag/test.bag"),
        common::corpus_dir().join("rosbag.js/example.bag"),
        common::corpus_dir().join("RosBagSharp/dataset.bag"),
        common::corpus2_dir().join("rosbag2/rolling_sqlite3/cdr_test"),
        common::corpus2_dir().join("rosbags-rs/test_bag_mcap"),
        common::corpus2_dir().join("rosbag2/humble_talker"),
    ];
    for (k, rec) in recordings.iter().enumerate() {
        let dir = d.join(format!("r{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        let bag = Bag::open(rec).unwrap();
        let (defs, want, skipped) = dump(&bag, &dir, 3);
        assert!(!want.is_empty(), "{}", rec.display());
        // Every topic of these recordings decodes: none is passed over uncounted.
        assert!(skipped.is_empty(), "{}: {skipped:?}", rec.display());
        let what = rec.display().to_string();
        let manifest = dir.join("manifest.txt");
        // C++
        std::fs::write(dir.join(Lang::Cpp.file_name()), generate(&defs, Lang::Cpp)).unwrap();
        std::fs::write(dir.join("main.cpp"), CPP_MAIN).unwrap();
        run(
            Command::new("g++")
                .args(["-std=c++17", "-O0", "-Wall", "-Werror", "-o"])
                .arg(dir.join("cpp"))
                .arg(dir.join("main.cpp")),
            &format!("g++ on {what}"),
        );
        check_lines(
            &run(Command::new(dir.join("cpp")).arg(&manifest), "C++"),
            &want,
            &format!("C++, {what}"),
        );
        // Rust
        std::fs::write(
            dir.join(Lang::Rust.file_name()),
            generate(&defs, Lang::Rust),
        )
        .unwrap();
        std::fs::write(dir.join("main.rs"), RUST_MAIN).unwrap();
        run(
            Command::new("rustc")
                .args(["--edition", "2021", "-o"])
                .arg(dir.join("rs"))
                .arg(dir.join("main.rs")),
            &format!("rustc on {what}"),
        );
        check_lines(
            &run(Command::new(dir.join("rs")).arg(&manifest), "Rust"),
            &want,
            &format!("Rust, {what}"),
        );
        // Python
        std::fs::write(
            dir.join(Lang::Python.file_name()),
            generate(&defs, Lang::Python),
        )
        .unwrap();
        check_lines(
            &run(
                Command::new("python3")
                    .args(["-c", PY_MAIN])
                    .arg(&manifest)
                    .arg(&dir),
                "Python",
            ),
            &want,
            &format!("Python, {what}"),
        );
    }
}
