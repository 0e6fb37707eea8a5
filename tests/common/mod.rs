//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The real corpus, `../shared/bags` beside the project. Panics (never skips) when it is
/// missing, so a CI run without it fails loudly.
pub fn corpus_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bags");
    assert!(
        d.join("expected.json").is_file(),
        "the real bag corpus is missing: expected {} (see README, 'Tests')",
        d.display()
    );
    d
}

/// `expected.json` of the corpus.
pub fn expected() -> serde_json::Map<String, serde_json::Value> {
    let p = corpus_dir().join("expected.json");
    let text = std::fs::read_to_string(&p).expect("read expected.json");
    match serde_json::from_str(&text).expect("parse expected.json") {
        serde_json::Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bagscope-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}
