//! MP4 and video: a video topic exported to MP4 decodes with ffmpeg to the stream's frames, and
//! MP4 files as ffmpeg writes them, read as recordings, decode to ffmpeg's frames (the checks
//! of [`crate::video`]).

use crate::common;
use crate::common::video::{self as v, Stream};
use crate::video::{check_frames, index};

/// `bagscope export -o cut.mp4` of a video topic's range: the packets muxed as they are, from
/// the keyframe before the start to the keyframe after the end; ffmpeg decodes the file to
/// the very frames it decodes from the elementary stream.
#[test]
fn an_exported_mp4_decodes_with_ffmpeg_to_the_same_frames() {
    if !v::ffmpeg() {
        return;
    }
    // AV1 into `av01` with its `av1C`, decoded by ffmpeg's libdav1d.
    for (name, a, b) in [
        ("x264-high-b", 100, 150),
        ("x265-b", 100, 150),
        ("aom-av1", 40, 50),
        ("svt-av1-10bit", 40, 50),
    ] {
        let s = v::stream(name);
        let dir = common::temp_dir(&format!("video-mp4-{name}"));
        let path = dir.join("camera.mcap");
        v::protobuf_mcap(&path, &s, &s.aus);
        let (bag, ix) = index(&path, "/camera");
        // From frame a to frame b: whole groups, the keyframes at or before a and after b
        // (x264 100-150: 90..180; x265: from its keyframe before 100; AV1 40-50: 30..60).
        // Times between two messages (epoch seconds on the command line are floats).
        let start = ix.time_of(a).unwrap() + v::PERIOD / 2;
        let end = ix.time_of(b).unwrap() - v::PERIOD / 2;
        let from = ix.keys[ix.keys.partition_point(|&k| k as usize <= a) - 1] as usize;
        let to = ix.keys[ix.keys.partition_point(|&k| (k as usize) < b)] as usize;
        let out = dir.join("cut.mp4");
        let secs = |t: u64| format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
        common::bagscope(&[
            &"export",
            &path,
            &"-o",
            &out,
            &"-t",
            &"/camera",
            &"--start",
            &secs(start),
            &"--end",
            &secs(end),
        ])
        .ok();
        let av1 = s.codec == bagscope_ops::media::video::Codec::Av1;
        let got = v::framemd5_with(&out, s.pix_fmt, av1.then_some("libdav1d"));
        // An H.265 CRA's RASL pictures refer to the group before: not written.
        let rasl = s.aus[from + 1..]
            .iter()
            .take_while(|a| bagscope_ops::media::video::nal::kind(s.codec, a).rasl)
            .count();
        assert_eq!(got.len(), to - from - rasl, "{name}: frames in the mp4");
        assert_eq!(got, s.md5[from + rasl..to], "{name}");
        drop(bag);
    }
}

/// MP4 files as ffmpeg writes them (AV1 by SVT-AV1 as LeRobot's datasets hold it, and by
/// libaom; H.264 and H.265 with B-frames, so with composition offsets): their video track read
/// as a recording (`mp4_read::to_mcap`) decodes, in order and from random seeks, to the frames
/// ffmpeg decodes from the same file (AV1 by libdav1d).
#[test]
fn mp4_files_read_as_recordings_decode_as_ffmpeg_does() {
    use bagscope_ops::media::video::{mp4_read, Codec};
    if !v::ffmpeg() {
        return;
    }
    let dir = common::temp_dir("video-mp4");
    let cases: [(&str, Codec, &str, &[&str]); 4] = [
        ("svt-av1", Codec::Av1, "yuv420p", v::SVT_AV1),
        ("aom-av1", Codec::Av1, "yuv420p", v::AOM_AV1),
        ("x264-b", Codec::H264, "yuv420p", v::X264_B),
        ("x265-b", Codec::H265, "yuv420p", v::X265_B),
    ];
    for (name, codec, pix_fmt, args) in cases {
        let mp4 = dir.join(format!("{name}.mp4"));
        v::encode(&mp4, "320x240", 90, pix_fmt, args);
        assert!(mp4_read::is_mp4(&mp4), "{name}");
        let md5 = v::framemd5_with(&mp4, pix_fmt, (codec == Codec::Av1).then_some("libdav1d"));
        assert_eq!(md5.len(), 90, "{name}: ffmpeg's frames");
        let mcap = dir.join(format!("{name}.mcap"));
        assert_eq!(
            mp4_read::to_mcap(&mp4, &mcap).unwrap(),
            90,
            "{name}: samples"
        );
        let s = Stream {
            path: mp4.clone(),
            codec,
            aus: Vec::new(),
            md5,
            pix_fmt,
        };
        check_frames(&mcap, "/video", &s);
    }
    // Not an MP4, and an MP4 cut short: said, never a panic.
    let text = dir.join("not.mp4");
    std::fs::write(&text, b"hello").unwrap();
    assert!(!mp4_read::is_mp4(&text));
    let whole = std::fs::read(dir.join("x264-b.mp4")).unwrap();
    for cut in [100, whole.len() / 2, whole.len() - 10] {
        let p = dir.join("cut.mp4");
        std::fs::write(&p, &whole[..cut]).unwrap();
        let _ = mp4_read::to_mcap(&p, &dir.join("cut.mcap"));
    }
    // Bytes of its movie box changed (sizes, counts, offsets forged): an error or a recording,
    // soon, never a panic.
    let moov = whole.windows(4).position(|w| w == b"moov").unwrap();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..100 {
        let mut b = whole.clone();
        for _ in 0..4 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let i = moov + (rng as usize % (whole.len() - moov));
            b[i] = (rng >> 32) as u8;
        }
        let p = dir.join("forged.mp4");
        std::fs::write(&p, &b).unwrap();
        let _ = mp4_read::to_mcap(&p, &dir.join("forged.mcap"));
    }
}
