//! `cargo bench --bench ui_frame -- --video-only`: the app playing a 1080p H.264 camera with
//! B-frames (`foxglove.CompressedVideo`, made here by ffmpeg and bagscope's MCAP writer) in an
//! image panel, at 1× and at 5×: the UI thread's frame times, and how far the panel got.

use std::path::Path;
use std::process::Command;

use bagscope_app::Cmd;
use bagscope_ops::media::video::{nal, proto, Codec};
use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};

use super::{report, Bench};

/// Writes `frames` of 1080p30 x264 (High, B-frames, GOP 30) as an MCAP; `false` without ffmpeg.
fn recording(path: &Path, frames: usize) -> bool {
    let es = path.with_extension("h264");
    let made = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
        ])
        .arg("testsrc2=size=1920x1080:rate=30")
        .args([
            "-frames:v",
            &frames.to_string(),
            "-pix_fmt",
            "yuv420p",
            "-c:v",
            "libx264",
        ])
        .args([
            "-preset",
            "veryfast",
            "-bf",
            "2",
            "-g",
            "30",
            "-sc_threshold",
            "0",
        ])
        .arg(&es)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        return false;
    }
    let data = std::fs::read(&es).expect("stream");
    let mut w = McapWriter::create(path, McapOptions::default()).expect("mcap");
    let schema = w
        .add_schema(
            "foxglove.CompressedVideo",
            "protobuf",
            &proto::compressed_video_descriptor(),
        )
        .expect("schema");
    let ch = w
        .add_channel(schema, "/camera", "protobuf", &[])
        .expect("channel");
    let t0 = 1_700_000_000_000_000_000u64;
    for (i, au) in nal::access_units(Codec::H264, &data).iter().enumerate() {
        let t = t0 + i as u64 * 33_333_333;
        let m = proto::compressed_video(t, "camera", au, "h264");
        w.write(ch, i as u32, t, t, &m).expect("write");
    }
    w.finish().expect("finish");
    true
}

/// The frame number the panel shows (from its label).
fn shown(b: &Bench) -> Option<usize> {
    let d = b.app.doc.as_ref()?;
    let f = d.images.panels.first()?.frame.as_ref()?;
    let e = &f.image.encoding;
    let at = e.find("frame ")? + 6;
    e[at..].split_whitespace().next()?.parse().ok()
}

pub fn video(n: usize) {
    let dir = std::env::temp_dir().join(format!("bagscope-ui-video-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("camera.mcap");
    // Enough frames for both runs at 5× (n frames of a 60 Hz display at 5× are n / 2 video
    // frames at 30 fps).
    let frames = (n * 3 / 4).clamp(120, 600);
    if !recording(&path, frames) {
        println!("image panel, 1080p h264       skipped: no ffmpeg");
        return;
    }
    let mut b = Bench::indexed(&path);
    b.app.apply(Cmd::OpenImage(0));
    b.app.apply(Cmd::FitAll);
    b.until_shown();
    for speed in [1.0f32, 5.0] {
        let start = b.app.doc.as_ref().map_or(0, |d| d.rec.range().0);
        b.app.apply(Cmd::SetPlayhead(start));
        b.at_60hz(10);
        let from = shown(&b).unwrap_or(0);
        b.app.apply(Cmd::SetSpeed(speed));
        b.app.apply(Cmd::TogglePlay);
        let f = b.at_60hz(n / 2);
        b.app.apply(Cmd::TogglePlay);
        let to = shown(&b).unwrap_or(0);
        report(&format!("image panel, 1080p h264 {speed}×"), f);
        println!(
            "  (frames {from} to {to} shown in {:.1} s of playing)",
            (n / 2) as f64 / 60.0
        );
    }
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}
