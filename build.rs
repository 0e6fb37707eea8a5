//! Links the `bagscope` executable as a position-dependent executable on Linux.
//!
//! As a PIE, the dynamic loader applied 84,000 relative relocations to the binary at every start
//! (pointers in vtables, string tables and panic locations, 2 MB of `.rela.dyn`), copying the
//! 1.3 MB they land in page by page: `bagscope --version` took 4.95 ms and 510 page faults, and a
//! 10 s `csv` window of an uncompressed MCAP is a 20 ms process. Linked without `-pie` the
//! linker resolves them once: 2.55 ms and 181 page faults (`perf stat -r 20`). The code is
//! still compiled position-independent, and shared libraries, heap and stack stay randomised;
//! only the executable's own load address is fixed (as in Go's default executables). The
//! library, its tests and the Python module are unaffected (`rustc-link-arg-bins` reaches this
//! package's executables only).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && (env == "gnu" || env == "musl") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
