//! Recordings over HTTP from a server on 127.0.0.1 (`common::http`): the library reads what it
//! reads from the local file, opening an indexed bag or MCAP takes a few requests, a failing
//! server is retried and then a clear error, and a location is shown without credentials.
#![cfg(feature = "remote")]
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::Ordering;

use bagscope_ops::tables::export::{export, ExportOptions, OutputFormat};
use bagscope_reader::Bag;
use common::messages;

#[test]
fn a_bag_and_an_mcap_over_http_read_as_the_local_files() {
    let dir = common::temp_dir("remote-http");
    let bag = dir.join("run.bag");
    common::write_fixture(&bag, bagscope_reader::Compression::Lz4, 4000, 3000);
    let mcap = dir.join("run.mcap");
    export(
        &Bag::open(&bag).unwrap(),
        &mcap,
        &ExportOptions {
            format: Some(OutputFormat::Mcap),
            ..Default::default()
        },
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let srv = common::http::serve(dir.to_path_buf());
    for name in ["run.bag", "run.mcap"] {
        srv.state.requests.store(0, Ordering::SeqCst);
        let url = format!("{}/{name}", srv.url);
        let remote = Bag::open(&url).unwrap();
        let s = remote.summary();
        let opened = srv.state.requests.load(Ordering::SeqCst);
        assert!(opened <= 4, "{name}: {opened} requests to open");
        let local = Bag::open(dir.join(name)).unwrap();
        assert_eq!(s.path.to_string_lossy(), url);
        assert_eq!(s.message_count, local.summary().message_count);
        assert_eq!(s.chunks.len(), local.summary().chunks.len());
        assert_eq!(messages(&remote), messages(&local), "{name}");
    }
}

#[test]
fn a_failing_server_is_retried_then_a_clear_error() {
    let dir = common::temp_dir("remote-fail");
    let bag = dir.join("run.bag");
    common::write_fixture(&bag, bagscope_reader::Compression::None, 4000, 500);
    let srv = common::http::serve(dir.to_path_buf());
    let url = format!("{}/run.bag", srv.url);
    let want = messages(&Bag::open(&bag).unwrap());
    // Two answers of 500 and a connection dropped mid-body: retried, the same messages.
    srv.state.fail_500.store(2, Ordering::SeqCst);
    srv.state.drop.store(1, Ordering::SeqCst);
    let b = Bag::open(&url).unwrap();
    assert_eq!(messages(&b), want);
    assert_eq!(srv.state.fail_500.load(Ordering::SeqCst), 0);
    assert_eq!(srv.state.drop.load(Ordering::SeqCst), 0);
    // Failing every time: an error naming the location and the status, not a short read.
    srv.state.fail_500.store(1000, Ordering::SeqCst);
    let e = Bag::open(&url).map(|_| ()).unwrap_err().to_string();
    srv.state.fail_500.store(0, Ordering::SeqCst);
    assert!(e.contains(&url) && e.contains("500"), "{e}");
    // Nothing there.
    let e = Bag::open(format!("{}/none.bag", srv.url))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no such object"), "{e}");
}

/// `bagscope csv` of a recording over HTTP into a new file: it once compared the output's
/// canonical path with the recording's, both unresolved (a URL, a file not yet written), found
/// them equal and refused to write.
#[test]
fn a_csv_of_a_remote_recording_is_written_as_the_local_files_is() {
    let dir = common::temp_dir("remote-csv");
    common::write_fixture(
        &dir.join("run.bag"),
        bagscope_reader::Compression::Lz4,
        4000,
        300,
    );
    let srv = common::http::serve(dir.to_path_buf());
    let csv = |bag: &str, out: &std::path::Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
            .args(["csv", bag, "/a.data", "/b.data", "-o"])
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out).unwrap()
    };
    let local = csv(
        dir.join("run.bag").to_str().unwrap(),
        &dir.join("local.csv"),
    );
    let remote = csv(&format!("{}/run.bag", srv.url), &dir.join("remote.csv"));
    assert_eq!(remote, local);
    assert_eq!(local.lines().count(), 301);
}

#[test]
fn credentials_in_a_location_are_never_shown() {
    let dir = common::temp_dir("remote-creds");
    common::write_fixture(
        &dir.join("run.bag"),
        bagscope_reader::Compression::None,
        4000,
        50,
    );
    let srv = common::http::serve(dir.to_path_buf());
    let host = srv.url.trim_start_matches("http://");
    let url = format!("http://alice:hunter2secret@{host}/run.bag?X-Amz-Signature=deadbeefcafe");
    let b = Bag::open(&url).unwrap();
    let shown = b.summary().path.to_string_lossy().into_owned();
    assert_eq!(shown, format!("http://{host}/run.bag"));
    let e = Bag::open(format!(
        "http://alice:hunter2secret@{host}/none.bag?sig=deadbeefcafe"
    ))
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        !e.contains("hunter2secret") && !e.contains("deadbeefcafe"),
        "{e}"
    );
}

/// A self-signed certificate for 127.0.0.1 and its key (`NAME-cert.pem`, `NAME-key.pem` in
/// `dir`), made by the `openssl` command.
fn self_signed(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let cert = dir.join(format!("{name}-cert.pem"));
    let key = dir.join(format!("{name}-key.pem"));
    let out = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-nodes", "-days", "2"])
        .args([
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("the openssl command (Debian's openssl package) makes the test's certificate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (cert, key)
}

/// TLS is rustls on ring with the provider bagscope installs: a recording behind a
/// certificate the system trusts (here: the one `SSL_CERT_FILE` names) reads as the local
/// file; behind one it does not, it is refused with an error, not read and not a panic.
#[test]
fn over_https_a_trusted_certificate_reads_and_an_unknown_one_is_refused() {
    let dir = common::temp_dir("remote-https");
    let bag = dir.join("run.bag");
    common::write_fixture(&bag, bagscope_reader::Compression::Lz4, 4000, 500);
    let (cert, key) = self_signed(&dir, "server");
    let srv = common::http::serve_tls(dir.to_path_buf(), &cert, &key);
    let url = format!("{}/run.bag", srv.url);
    let info = |trust: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
            .args(["info", &url])
            .env("SSL_CERT_FILE", trust)
            .env_remove("SSL_CERT_DIR")
            .env("BAGSCOPE_RETRIES", "0")
            .env("BAGSCOPE_INDEX_DIR", "off")
            .output()
            .unwrap()
    };
    let local = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .arg("info")
        .arg(&bag)
        .env("BAGSCOPE_INDEX_DIR", "off")
        .output()
        .unwrap();
    let trusted = info(&cert);
    let text = String::from_utf8_lossy(&trusted.stdout);
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    // The same report but for the path.
    let local_text = String::from_utf8_lossy(&local.stdout);
    let body = |t: &str| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(body(&text), body(&local_text));
    assert!(text.contains("500"), "{text}");
    assert!(srv.state.requests.load(Ordering::SeqCst) >= 2);
    // A trust store without that certificate: refused at the handshake.
    let (other, _) = self_signed(&dir, "other");
    let refused = info(&other);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains(&url) && !err.contains("panicked"), "{err}");
}
