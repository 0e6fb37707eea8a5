//! `cargo xtask`: the project's tasks.
//!
//! `cargo xtask test TIER` runs one tier of the tests (`TESTING.md` says what each needs):
//!
//! - `unit`: nothing beyond the repository and the Rust toolchain (no `../shared`, no
//!   network, no ROS, no display): every crate's unit tests (less those over the shared
//!   corpora, in modules named `shared_corpus`), the doc tests, `tests/unit`, `tests/scale`,
//!   the reader's layer check;
//! - `corpus`: the shared corpora (`../shared/bags`, `../shared/bags2`) and the peer tools
//!   `.ci/run` installs: `tests/corpus`, `tests/sqlite`, the unit tests of the corpora;
//! - `live`: live ROS 1 and ROS 2 graphs (roscore, rclpy, network namespaces): `tests/live`;
//! - `gui`: the app driven headless (`tests/gui`), its renderer on a real GL context under
//!   Xvfb (`tests/scene_gl`), and every benchmark once in its short mode;
//! - `all`: everything built first (one build of every target), then each tier in turn;
//! - `build`: that build alone.
//!
//! `cargo xtask exe TEST` prints the path of the test binary `tests/TEST` of that build (built
//! first if it is not), for a caller that runs it without holding cargo's lock on `target/`:
//! `.ci/run` runs the live tier so, with `cargo doc` beside it.
//!
//! Every run turns on the root package's `external-tests` feature, which the corpus, live
//! and GUI test binaries require: plain `cargo test` on a bare clone is the unit tier alone.
//! The same features on every run, so one build serves all tiers.
//!
//! `cargo xtask lint` makes every check CI makes that needs neither root nor the network:
//! `cargo fmt --check`, clippy with warnings denied on every target, `typos` (when it is
//! installed: `pip install typos`), rustdoc with warnings denied, and the docs test (links,
//! paths, the CLI reference).
//!
//! `cargo xtask dist [--dev]` makes a release's files in `dist/` (the wheel, the `.deb`, a
//! `.tar.gz`, their checksums; `dist.rs`).
//!
//! `cargo xtask docs` writes the command-line reference (`docs/cli-reference.md`) anew from
//! the binary's `--help` (a unit test fails while it differs).

use std::process::{Command, ExitCode};

mod dist;

/// The feature that builds the test binaries needing more than the repository.
const FEATURES: &[&str] = &["--features", "bagscope/external-tests"];

/// The crates `cargo test` means here (not the Python module, the fuzz targets or this; nor
/// the AV1 encoder, whose tests are bagscope-ops': its library built as a test again took
/// 32 s of compiler time for two tests).
const EXCLUDE: &[&str] = &[
    "--exclude",
    "bagscope-av1enc",
    "--exclude",
    "bagscope-python",
    "--exclude",
    "bagscope-fuzz",
    "--exclude",
    "xtask",
];

/// One `cargo` run: the arguments, then the test binaries' own after `--`.
struct Run {
    args: Vec<&'static str>,
    test_args: Vec<&'static str>,
}

fn run(args: &[&'static str], test_args: &[&'static str]) -> Run {
    Run {
        args: args.to_vec(),
        test_args: test_args.to_vec(),
    }
}

/// `cargo test` over the crates and with the features of every tier (one build serves all),
/// then `extra`.
fn ws(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = vec!["test", "--workspace"];
    v.extend_from_slice(EXCLUDE);
    v.extend_from_slice(FEATURES);
    v.extend_from_slice(extra);
    v
}

/// What `cargo` runs for `tier`.
fn tier(name: &str) -> Option<Vec<Run>> {
    Some(match name {
        "unit" => vec![
            run(
                &ws(&[
                    "--lib", "--bins", "--test", "unit", "--test", "scale", "--test", "layers",
                    "--test", "it",
                ]),
                &[],
            ),
            run(&ws(&["--doc"]), &[]),
        ],
        "corpus" => vec![
            // The crates' unit tests over the corpora are `#[ignore]`d in plain runs.
            run(&ws(&["--lib"]), &["--ignored", "shared_corpus::"]),
            run(&ws(&["--test", "corpus", "--test", "sqlite"]), &[]),
        ],
        "live" => vec![run(&ws(&["--test", "live"]), &[])],
        "gui" => vec![
            run(&ws(&["--test", "gui", "--test", "scene_gl"]), &[]),
            // A benchmark run as a test is its short mode (no `--bench` argument).
            run(&ws(&["--bench", "ui_frame"]), &[]),
        ],
        _ => return None,
    })
}

fn cargo(r: &Run) -> bool {
    cargo_with(r, &[])
}

fn cargo_with(r: &Run, env: &[(&str, &str)]) -> bool {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.args(&r.args);
    c.envs(env.iter().copied());
    if !r.test_args.is_empty() {
        c.arg("--").args(&r.test_args);
    }
    eprintln!("xtask: cargo {}", {
        let mut s = r.args.join(" ");
        if !r.test_args.is_empty() {
            s.push_str(" -- ");
            s.push_str(&r.test_args.join(" "));
        }
        s
    });
    c.status().is_ok_and(|s| s.success())
}

/// Prints the executable of the test target `name` of the tiers' build (`cargo test --no-run`
/// with the tiers' packages and features, so nothing is built anew when it is current).
fn exe(name: &str) -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.args(ws(&[
        "--no-run",
        "--message-format=json-render-diagnostics",
        "--test",
    ]))
    .arg(name)
    .stderr(std::process::Stdio::inherit());
    let out = match c.output() {
        Ok(o) if o.status.success() => o.stdout,
        Ok(o) => {
            eprintln!("xtask: exe {name}: cargo failed ({})", o.status);
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("xtask: exe {name}: cargo: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One JSON object a line; the test's artifact names its executable.
    let found = String::from_utf8_lossy(&out).lines().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        (v["reason"] == "compiler-artifact" && v["target"]["name"] == name)
            .then(|| v["executable"].as_str().map(str::to_owned))
            .flatten()
    });
    match found {
        Some(path) => {
            println!("{path}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("xtask: exe {name}: no test binary named {name} in cargo's output");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask test unit|corpus|live|gui|all|build\n       cargo xtask exe TEST\n       \
         cargo xtask lint\n       \
         cargo xtask docs\n       cargo xtask dist [--dev]"
    );
    ExitCode::from(2)
}

/// `cargo xtask docs`: the reference written by the test that checks it.
fn docs() -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ok = Command::new(cargo)
        .args([
            "test",
            "--features",
            "bagscope/external-tests",
            "--test",
            "unit",
        ])
        .args(["--", "docs::the_cli_reference"])
        .env("BAGSCOPE_BLESS", "1")
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        eprintln!("xtask: wrote docs/cli-reference.md");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `cargo xtask lint`: CI's checks without root or network, each run even when one before
/// failed, so one pass shows everything to mend.
fn lint() -> ExitCode {
    let mut all = vec!["clippy", "--workspace", "--all-targets"];
    all.extend_from_slice(FEATURES);
    all.extend_from_slice(&["--", "-D", "warnings"]);
    let mut docs_test = vec!["test"];
    docs_test.extend_from_slice(FEATURES);
    docs_test.extend_from_slice(&["--test", "unit"]);
    let runs = [
        (run(&["fmt", "--all", "--", "--check"], &[]), vec![]),
        (run(&all, &[]), vec![]),
        (
            run(
                &[
                    "doc",
                    "--no-deps",
                    "--quiet",
                    "-p",
                    "bagscope-reader",
                    "-p",
                    "bagscope-ops",
                    "-p",
                    "bagscope-live",
                    "-p",
                    "bagscope-app",
                    "-p",
                    "bagscope",
                ],
                &[],
            ),
            vec![("RUSTDOCFLAGS", "-D warnings")],
        ),
        (run(&docs_test, &["docs::"]), vec![]),
    ];
    let mut failed = Vec::new();
    for (r, env) in &runs {
        if !cargo_with(r, env) {
            failed.push(r.args.join(" "));
        }
    }
    // The spell check is a Python wheel's binary (`pip install typos`, as `.ci/run` does).
    match Command::new("typos").status() {
        Ok(s) if s.success() => {}
        Ok(_) => failed.push("typos".into()),
        Err(_) => eprintln!("xtask: typos is not installed (pip install typos==1.52.0): skipped"),
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("xtask: failed: {}", failed.join("; "));
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() == 1 && args[0] == "docs" {
        return docs();
    }
    if args.len() == 1 && args[0] == "lint" {
        return lint();
    }
    if args.first().is_some_and(|a| a == "dist") {
        let dev = match &args[1..] {
            [] => false,
            [d] if d == "--dev" => true,
            _ => return usage(),
        };
        return match dist::dist(dev) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask: dist: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let [verb, which] = args.as_slice() else {
        return usage();
    };
    if verb == "exe" {
        return exe(which);
    }
    if verb != "test" {
        return usage();
    }
    let tiers: Vec<&str> = match which.as_str() {
        "all" => vec!["unit", "corpus", "live", "gui"],
        "build" => vec![],
        one => vec![one],
    };
    let mut runs = Vec::new();
    if which == "all" || which == "build" {
        // Every target built at once (the build uses both cores; the tiers then only run).
        runs.push(run(&ws(&["--no-run", "--all-targets"]), &[]));
    }
    for t in tiers {
        let Some(r) = tier(t) else {
            return usage();
        };
        runs.extend(r);
    }
    let mut failed = Vec::new();
    for r in &runs {
        let t0 = std::time::Instant::now();
        let ok = cargo(r);
        // What each step cost, so that a slow CI run says where its time went.
        eprintln!(
            "xtask: {:.0} s: cargo {}",
            t0.elapsed().as_secs_f64(),
            r.args.join(" ")
        );
        if !ok {
            failed.push(r.args.join(" "));
            // A build that fails leaves nothing to run.
            if r.args.contains(&"--no-run") {
                break;
            }
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("xtask: failed: {}", failed.join("; "));
        ExitCode::FAILURE
    }
}
