//! Links the `bagscope` executable as a position-dependent executable on Linux (glibc).
//!
//! As a PIE, the dynamic loader applied 84,000 relative relocations to the binary at every start
//! (pointers in vtables, string tables and panic locations, 2 MB of `.rela.dyn`), copying the
//! 1.3 MB they land in page by page: `bagscope --version` took 4.95 ms and 510 page faults, and a
//! 10 s `csv` window of an uncompressed MCAP is a 20 ms process. Linked without `-pie` the
//! linker resolves them once: 2.55 ms and 181 page faults (`perf stat -r 20`). The code is
//! still compiled position-independent, and shared libraries, heap and stack stay randomised;
//! only the executable's own load address is fixed (as in Go's default executables). That is
//! a hardening given up: a memory bug in one of the C libraries a recording reaches (libzstd,
//! libbz2, SQLite) would find the executable's code at a known place. `BAGSCOPE_PIE=1 cargo
//! build --release` links a PIE as before. The library, its tests and the Python module are
//! unaffected (`rustc-link-arg-bins` reaches this package's executables only).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    commit();
    println!("cargo:rerun-if-env-changed=BAGSCOPE_PIE");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let pie = std::env::var("BAGSCOPE_PIE").is_ok_and(|v| v == "1");
    // glibc targets only: musl's are linked static-pie, which `-no-pie` would contradict.
    if os == "linux" && env == "gnu" && !pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

/// `BAGSCOPE_COMMIT`: the commit built (`git rev-parse`; the work tree's changes since are
/// not said, as tracking them would rebuild the executable at every `git add`); BAGSCOPE_COMMIT from the environment where there is no git checkout (a source
/// tarball); "unknown" otherwise. `bagscope --version` names it.
fn commit() {
    println!("cargo:rerun-if-env-changed=BAGSCOPE_COMMIT");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = std::env::var("BAGSCOPE_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BAGSCOPE_COMMIT={commit}");
    // Built again when HEAD moves (a commit, a checkout).
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for f in ["HEAD", "packed-refs"] {
            println!("cargo:rerun-if-changed={dir}/{f}");
        }
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{r}");
        }
    }
}
