//! Compressed video against ffmpeg: streams made by Debian's ffmpeg (x264 Baseline, x264 High
//! with B-frames at 720p, x265 with B-frames, x265 Main 10; 300 frames, GOP 30), wrapped into
//! an MCAP of protobuf `foxglove.CompressedVideo`, a ROS 2 MCAP of `FFMPEGPacket` and a ROS 1
//! bag of `CompressedImage`; every frame bagscope decodes has the md5 of ffmpeg's
//! single-thread decode of the same elementary stream, in order, from a sequential read and
//! from 200 random seeks (50 in CI's short mode); a recording that starts mid-GOP shows
//! nothing until its first keyframe; a corrupt packet costs its group only. MP4 out and in:
//! [`crate::video_mp4`].

use std::path::Path;
use std::sync::Arc;

use bagscope_ops::media::video::{Codec, Shown, Video, VideoIndex, DEFAULT_BUDGET};
use bagscope_reader::Bag;

use crate::common;
use crate::common::video::{self as v, Stream};

pub(crate) fn index(path: &Path, topic: &str) -> (Bag, Arc<VideoIndex>) {
    let bag = Bag::open(path).unwrap();
    let ix = VideoIndex::build(&bag, topic, None).unwrap();
    (bag, Arc::new(ix))
}

/// `aus` of `s` in an MCAP of protobuf `foxglove.CompressedVideo` (topic `/camera`) in a
/// directory of its own (kept while the returned guard lives), indexed.
fn in_protobuf_mcap(
    tag: &str,
    s: &Stream,
    aus: &[Vec<u8>],
) -> (common::TempDir, Bag, Arc<VideoIndex>) {
    let dir = common::temp_dir(tag);
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, s, aus);
    let (bag, ix) = index(&path, "/camera");
    (dir, bag, ix)
}

fn md5(shown: &Shown) -> Option<String> {
    match shown {
        Shown::Frame(f) => Some(v::md5_of(&f.raw())),
        _ => None,
    }
}

/// Every frame in order, then [`v::random_seeks`] seeks with a cache too small to hold more
/// than a group.
pub(crate) fn check_frames(path: &Path, topic: &str, s: &Stream) {
    let (bag, ix) = index(path, topic);
    assert_eq!(ix.codec, s.codec);
    assert_eq!(ix.frames.len(), s.md5.len(), "{topic}: frames");
    assert_eq!(
        ix.keys.len(),
        s.md5.len() / 30,
        "{topic}: a keyframe every 30 frames"
    );
    let mut video = Video::new(Arc::clone(&ix), DEFAULT_BUDGET);
    for (n, want) in s.md5.iter().enumerate() {
        let got = md5(&video.frame(&bag, n));
        assert_eq!(got.as_deref(), Some(want.as_str()), "{topic}: frame {n}");
    }
    // Each decoded once (a group at a time, in order).
    assert_eq!(video.decoded, s.md5.len() as u64);
    let one = match video.frame(&bag, 0) {
        Shown::Frame(f) => f.bytes(),
        _ => unreachable!(),
    };
    let mut seeking = Video::new(Arc::clone(&ix), one * 40);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..v::random_seeks() {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let n = (rng % s.md5.len() as u64) as usize;
        // The frame shown at that frame's time, as the panel asks for it.
        let t = ix.time_of(n).unwrap() + 1000;
        let at = ix.frame_at(t).unwrap();
        assert_eq!(at, n);
        let got = md5(&seeking.frame(&bag, at));
        assert_eq!(
            got.as_deref(),
            Some(s.md5[n].as_str()),
            "{topic}: seek to {n}"
        );
    }
    assert!(seeking.evicted > 0, "the small cache let frames go");
    // Playing at 5×: every fifth frame asked, in order, each ffmpeg's.
    let mut fast = Video::new(Arc::clone(&ix), one * 40);
    for n in (3..s.md5.len()).step_by(5) {
        let got = md5(&fast.frame(&bag, n));
        assert_eq!(
            got.as_deref(),
            Some(s.md5[n].as_str()),
            "{topic}: at 5×, frame {n}"
        );
    }
    assert!(video.errors.is_empty() && seeking.errors.is_empty());
    fresh_seeks(&bag, &ix, s);
}

/// Seeks each from nothing, as a user's first click lands: ffmpeg's frame; with B-frames
/// fewer pictures decoded than the whole group up to the frame (the disposable ones between
/// skipped); then the worker's idle calls bring the frames after it.
fn fresh_seeks(bag: &Bag, ix: &Arc<VideoIndex>, s: &Stream) {
    let topic = &ix.topic;
    let (mut sparse, mut whole, mut copied) = (0u64, 0u64, 0u64);
    for n in (7..s.md5.len()).step_by(23) {
        let mut video = Video::new(Arc::clone(ix), DEFAULT_BUDGET);
        let got = md5(&video.frame(bag, n));
        assert_eq!(
            got.as_deref(),
            Some(s.md5[n].as_str()),
            "{topic}: seek to {n}"
        );
        sparse += video.decoded;
        let key = ix.keys[ix.keys.partition_point(|&k| k as usize <= n) - 1] as usize;
        // H.265: the pictures the frame refers to are decoded, their samples not copied out.
        copied += (key..n).filter(|&m| video.cached(m).is_some()).count() as u64 + 1;
        let mut dense = Video::new(Arc::clone(ix), DEFAULT_BUDGET);
        for m in key..=n {
            dense.frame(bag, m);
        }
        whole += dense.decoded;
        let mut steps = 0;
        while video.prefetch(bag, n, 4) {
            steps += 1;
            assert!(
                steps < 500,
                "{topic}: prefetch after a seek to {n} never ends"
            );
        }
        for m in n + 1..(n + 5).min(s.md5.len()) {
            let got = video.cached(m).as_ref().and_then(md5);
            assert_eq!(
                got.as_deref(),
                Some(s.md5[m].as_str()),
                "{topic}: frame {m} after a seek to {n}"
            );
        }
        assert!(video.errors.is_empty(), "{topic}: {:?}", video.errors);
    }
    // The streams made with B-frames (x264 -bf 3, x265 bframes=4: `tests/common/video.rs`).
    let stem = s.path.file_stem().unwrap_or_default().to_string_lossy();
    if s.codec != Codec::Av1 && stem.ends_with("-b") {
        assert!(
            sparse * 10 < whole * 8,
            "{topic}: seeks decoded {sparse} pictures, a whole decode {whole}"
        );
    }
    if s.codec == Codec::H265 && stem.ends_with("-b") {
        assert!(
            copied * 2 < sparse,
            "{topic}: {copied} of the {sparse} pictures seeks decoded were copied out"
        );
    }
    eprintln!(
        "{topic}: fresh seeks decoded {sparse} pictures ({copied} copied out), whole groups {whole}"
    );
}

#[test]
fn x264_baseline_in_a_ros1_compressed_image_bag_decodes_as_ffmpeg_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x264-baseline");
    let dir = common::temp_dir("video-ros1");
    let path = dir.join("camera.bag");
    v::compressed_image_bag(&path, &s, &s.aus);
    check_frames(&path, "/camera/h264", &s);
}

#[test]
fn x264_high_with_b_frames_in_protobuf_compressed_video_decodes_as_ffmpeg_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x264-high-b");
    let dir = common::temp_dir("video-pb");
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera", &s);
}

/// H.264's reference lists read from the slice headers: a seek from nothing to every frame
/// of x264's `medium` (3 references, weighted P, B-pyramid; 90 frames) and `veryfast` (1
/// reference, B-pyramid, the P-frames' lists modified past the B-frames kept as references)
/// streams gives ffmpeg's frame, decoding fewer pictures than every non-disposable one from
/// the keyframe (what a seek decoded before the lists were read).
#[test]
fn h264_seeks_decode_what_the_reference_lists_lead_back_to() {
    if !v::ffmpeg() {
        return;
    }
    for name in ["x264-small-b", "x264-high-b"] {
        let s = v::stream(name);
        let (_dir, bag, ix) = in_protobuf_mcap("video-h264-refs", &s, &s.aus);
        let (mut decoded, mut kept) = (0u64, 0u64);
        for n in 0..s.md5.len() {
            let mut video = Video::new(Arc::clone(&ix), DEFAULT_BUDGET);
            let got = md5(&video.frame(&bag, n));
            assert_eq!(
                got.as_deref(),
                Some(s.md5[n].as_str()),
                "{name}: seek to {n}"
            );
            assert!(video.errors.is_empty(), "{name}: {:?}", video.errors);
            decoded += video.decoded;
            // Every picture from the keyframe that is not disposable, and the frame.
            let key = ix.keys[ix.keys.partition_point(|&k| k as usize <= n) - 1] as usize;
            let (from, to) = (ix.frames[key] as usize, ix.frames[n] as usize);
            kept += (from..to.max(from))
                .filter(|&p| ix.packets[p].order.is_some_and(|o| !o.disposable))
                .count() as u64
                + 1;
        }
        eprintln!(
            "{name}: seeks to every frame decoded {decoded} pictures, {kept} without the lists"
        );
        assert!(
            decoded <= kept,
            "{name}: {decoded} decoded, {kept} not disposable"
        );
        if name == "x264-high-b" {
            assert!(
                decoded * 10 < kept * 9,
                "{name}: the lists saved nothing ({decoded} decoded, {kept} not disposable)"
            );
        }
    }
}

#[test]
fn x265_with_b_frames_in_ros2_ffmpeg_packets_decodes_as_ffmpeg_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x265-b");
    let dir = common::temp_dir("video-ros2");
    let path = dir.join("camera.mcap");
    v::ffmpeg_packet_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera/ffmpeg", &s);
}

#[test]
fn json_compressed_video_decodes_as_ffmpeg_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x264-baseline");
    let dir = common::temp_dir("video-json");
    let path = dir.join("camera.mcap");
    v::json_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera", &s);
}

#[test]
fn x265_main10_decodes_as_ffmpeg_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x265-main10");
    let dir = common::temp_dir("video-main10");
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera", &s);
}

#[test]
fn libaom_av1_in_protobuf_compressed_video_decodes_as_libdav1d_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("aom-av1");
    let dir = common::temp_dir("video-av1");
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera", &s);
    // In JSON; and with no `format` said, each packet known as AV1 by its OBUs.
    let path = dir.join("camera-json.mcap");
    v::json_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera", &s);
    let path = dir.join("camera-unsaid.mcap");
    v::protobuf_mcap_as(&path, "", &s.aus);
    check_frames(&path, "/camera", &s);
    // What its sequence header says, read as the MP4's av1C needs it.
    let (_, ix) = index(&dir.join("camera.mcap"), "/camera");
    assert_eq!(ix.seq.colour.matrix, 2, "unspecified, as libaom writes it");
    let sh = bagscope_ops::media::video::obu::sequence_header(&s.aus[0]).unwrap();
    let o = bagscope_ops::media::video::obu::obus(sh);
    let h = bagscope_ops::media::video::obu::parse_sequence_header(o[0].payload).unwrap();
    assert_eq!(
        (h.profile, h.max_size, h.high_bitdepth),
        (0, (320, 240), false)
    );
    assert_eq!(h.subsampling, (true, true));
}

#[test]
fn svt_av1_10_bit_decodes_as_libdav1d_does() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("svt-av1-10bit");
    let dir = common::temp_dir("video-av1-10");
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, &s, &s.aus);
    check_frames(&path, "/camera", &s);
    let sh = bagscope_ops::media::video::obu::sequence_header(&s.aus[0]).unwrap();
    let o = bagscope_ops::media::video::obu::obus(sh);
    let h = bagscope_ops::media::video::obu::parse_sequence_header(o[0].payload).unwrap();
    assert_eq!(
        (h.profile, h.max_size, h.high_bitdepth),
        (0, (320, 240), true)
    );
}

/// A recording that starts on a P-frame (the first 10 packets cut): nothing until the first
/// keyframe (and, for an H.265 CRA, its RASL pictures, which refer to what was cut), then
/// ffmpeg's frames from it on.
#[test]
fn a_recording_starting_mid_gop_waits_for_its_first_keyframe() {
    if !v::ffmpeg() {
        return;
    }
    for name in ["x264-high-b", "x265-b"] {
        let s = v::stream(name);
        let (_dir, bag, ix) = in_protobuf_mcap(&format!("video-midgop-{name}"), &s, &s.aus[10..]);
        let k = ix.keys[0] as usize;
        let rasl = s.aus[10 + k + 1..]
            .iter()
            .take_while(|a| bagscope_ops::media::video::nal::kind(s.codec, a).rasl)
            .count();
        let mut video = Video::new(ix, DEFAULT_BUDGET);
        for n in 0..k + rasl {
            assert!(
                matches!(video.frame(&bag, n), Shown::Waiting),
                "{name}: {n}"
            );
        }
        for n in k + rasl..s.md5.len() - 10 {
            let got = md5(&video.frame(&bag, n));
            assert_eq!(
                got.as_deref(),
                Some(s.md5[n + 10].as_str()),
                "{name}: frame {n}"
            );
        }
    }
}

/// A packet cut short in the middle of the third group, and one of garbage after it: the
/// frames of that group from it on (and an H.265 CRA's RASL pictures after it, which refer to
/// it) are lost, said with the topic, time and codec; every other frame is ffmpeg's.
#[test]
fn a_corrupt_packet_costs_its_group_only() {
    if !v::ffmpeg() {
        return;
    }
    for name in ["x264-baseline", "x265-b"] {
        let s = v::stream(name);
        let mut aus = s.aus.clone();
        let bad = 75;
        let keep = aus[bad].len() / 3;
        aus[bad].truncate(keep);
        // A slice header and garbage: a picture by its NAL type, undecodable.
        let header: &[u8] = match s.codec {
            bagscope_ops::media::video::Codec::H264 => &[0, 0, 0, 1, 0x41],
            bagscope_ops::media::video::Codec::H265 => &[0, 0, 0, 1, 0x02, 0x01],
            other => panic!("no corrupt slice header made for {other}"),
        };
        aus[bad + 2] = [header, &[0xA7; 64][..]].concat();
        let dir = common::temp_dir(&format!("video-corrupt-{name}"));
        let path = dir.join("camera.mcap");
        v::protobuf_mcap(&path, &s, &aus);
        let (bag, ix) = index(&path, "/camera");
        let group = ix.keys.partition_point(|&k| k as usize <= bad) - 1;
        let from = ix.keys[group] as usize;
        let next = ix.keys[group + 1] as usize;
        let to = next
            + s.aus[next + 1..]
                .iter()
                .take_while(|a| bagscope_ops::media::video::nal::kind(s.codec, a).rasl)
                .count();
        let mut video = Video::new(ix, DEFAULT_BUDGET);
        let mut lost = 0;
        for (n, want) in s.md5.iter().enumerate() {
            match video.frame(&bag, n) {
                Shown::Frame(f) => {
                    if !(from..to).contains(&n) {
                        assert_eq!(&v::md5_of(&f.raw()), want, "{name}: frame {n}");
                    }
                }
                Shown::Lost(why) => {
                    assert!((from..to).contains(&n), "{name}: frame {n} lost: {why}");
                    assert!(
                        why.contains("/camera") && why.contains(s.codec.name()),
                        "{why}"
                    );
                    lost += 1;
                }
                Shown::Waiting => panic!("{name}: frame {n} waiting"),
            }
        }
        assert!(lost > 0, "{name}: nothing lost");
        assert!(!video.errors.is_empty());
    }
}

/// Shown as RGB by the stream's own colour description, as ffmpeg converts it: BT.601 where
/// the stream says nothing, BT.709 where it says so, limited and full range.
#[test]
fn frames_are_shown_in_rgb_as_ffmpeg_converts_them() {
    if !v::ffmpeg() {
        return;
    }
    let dir = common::temp_dir("video-rgb");
    for (name, params) in [
        ("unspecified", "colorprim=undef"),
        ("bt709", "colormatrix=bt709:colorprim=bt709:transfer=bt709"),
        (
            "bt709-full",
            "colormatrix=bt709:colorprim=bt709:transfer=bt709:fullrange=on",
        ),
    ] {
        let h264 = dir.join(format!("{name}.h264"));
        v::encode(
            &h264,
            "320x240",
            3,
            "yuv420p",
            &["-c:v", "libx264", "-x264-params", params],
        );
        let rgb = std::process::Command::new("ffmpeg")
            .args(["-hide_banner", "-loglevel", "error", "-threads", "1", "-i"])
            .arg(&h264)
            .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .output()
            .unwrap()
            .stdout;
        let data = std::fs::read(&h264).unwrap();
        let codec = bagscope_ops::media::video::Codec::H264;
        let aus: Vec<Vec<u8>> = bagscope_ops::media::video::nal::access_units(codec, &data)
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect();
        let s = v::Stream {
            path: h264.clone(),
            codec,
            aus,
            md5: Vec::new(),
            pix_fmt: "yuv420p",
        };
        let path = dir.join(format!("{name}.mcap"));
        v::protobuf_mcap(&path, &s, &s.aus);
        let (bag, ix) = index(&path, "/camera");
        let mut video = Video::new(ix, DEFAULT_BUDGET);
        let Shown::Frame(f) = video.frame(&bag, 0) else {
            panic!("{name}: no frame")
        };
        let diff = |ours: &[u8]| {
            assert_eq!(ours.len() / 4, rgb.len() / 3);
            let (mut worst, mut sum) = (0i32, 0u64);
            for (a, b) in ours.chunks_exact(4).zip(rgb.chunks_exact(3)) {
                for c in 0..3 {
                    let d = (i32::from(a[c]) - i32::from(b[c])).abs();
                    worst = worst.max(d);
                    sum += d as u64;
                }
            }
            (worst, sum as f64 / rgb.len() as f64)
        };
        let (worst, mean) = diff(&f.to_rgba());
        // swscale's own rounding: within 3 levels, under one on average.
        assert!(
            worst <= 3 && mean < 1.0,
            "{name}: worst {worst}, mean {mean}"
        );
        // Read with the other matrix or range, the colours are off: the test can fail.
        let mut wrong = (*f).clone();
        wrong.colour.matrix = if f.colour.matrix == 1 { 5 } else { 1 };
        wrong.colour.full_range = !f.colour.full_range;
        let (_, off) = diff(&wrong.to_rgba());
        assert!(
            off > 3.0,
            "{name}: the wrong description is off by only {off}"
        );
        eprintln!(
            "{name}: {} worst {worst} mean {mean:.3}, wrong {off:.1}",
            f.colour.matrix_name()
        );
    }
}

/// The same packets written by Foxglove's own SDK (pip `foxglove-sdk`, protobuf
/// `foxglove.CompressedVideo`): every frame is ffmpeg's.
#[test]
fn foxglove_sdk_written_video_decodes_as_ffmpeg_does() {
    if !v::ffmpeg() {
        return;
    }
    let ok = std::process::Command::new("python3")
        .args(["-c", "import foxglove"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "foxglove-sdk missing on CI"
        );
        return;
    }
    let s = v::stream("x264-high-b");
    let dir = common::temp_dir("video-sdk");
    let aus = dir.join("aus.bin");
    let mut b = Vec::new();
    for au in &s.aus {
        b.extend_from_slice(&(au.len() as u32).to_le_bytes());
        b.extend_from_slice(au);
    }
    std::fs::write(&aus, b).unwrap();
    let path = dir.join("sdk.mcap");
    let st = std::process::Command::new("python3")
        .arg("tests/py/foxglove_video.py")
        .arg(&aus)
        .arg(&path)
        .arg("h264")
        .status()
        .unwrap();
    assert!(st.success());
    check_frames(&path, "/camera", &s);
}

/// The packet-to-frame path on damaged streams (as the `video` fuzz target runs it): a real
/// stream's first access units with bytes flipped, runs zeroed, units cut short or dropped,
/// 150 times a codec with a fixed seed: headers read, every unit decoded, every picture made
/// RGB, never a panic.
#[test]
fn damaged_packets_never_panic_the_decoders() {
    use bagscope_ops::media::video::{decoder_for, nal};
    if !v::ffmpeg() {
        return;
    }
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n.max(1) as u64) as usize
    };
    for name in ["x264-baseline", "x265-b", "aom-av1"] {
        let s = v::stream(name);
        let mut pictures = 0;
        for _ in 0..150 {
            let mut aus: Vec<Vec<u8>> = s.aus[..8].to_vec();
            for _ in 0..1 + next(4) {
                let i = next(aus.len());
                let au = &mut aus[i];
                match next(4) {
                    0 => {
                        for _ in 0..1 + next(8) {
                            let j = next(au.len());
                            au[j] ^= 1 << next(8);
                        }
                    }
                    1 => {
                        let j = next(au.len());
                        let k = (j + next(64)).min(au.len());
                        au[j..k].fill(0);
                    }
                    2 => {
                        let keep = next(au.len());
                        au.truncate(keep);
                    }
                    _ => {
                        aus.remove(i);
                    }
                }
            }
            let stream = aus.concat();
            let _ = nal::sniff(&stream);
            let _ = bagscope_ops::media::video::obu::is_av1(&stream);
            let seq = nal::seq_info(s.codec, &stream).unwrap_or_default();
            let mut dec = decoder_for(s.codec, seq);
            let mut out = Vec::new();
            for (i, au) in nal::access_units(s.codec, &stream).into_iter().enumerate() {
                let _ = nal::kind(s.codec, au);
                if dec.push(au, i as i64, &mut out).is_err() {
                    break;
                }
            }
            dec.flush(&mut out);
            for f in &out {
                assert_eq!(f.to_rgba().len(), f.width * f.height * 4);
            }
            pictures += out.len();
        }
        assert!(pictures > 0, "{name}: no picture from any damaged stream");
    }
}

/// The demo recording's video camera (encoded by bagscope's demo with the pure-Rust encoder):
/// ffmpeg decodes its packets to the frames bagscope shows.
#[test]
fn the_demo_video_camera_decodes_as_ffmpeg_decodes_it() {
    if !v::ffmpeg() {
        return;
    }
    let dir = common::temp_dir("video-demo");
    let path = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&path, 12).unwrap();
    let (bag, ix) = index(&path, "/camera/front/h264");
    assert_eq!(ix.codec, bagscope_ops::media::video::Codec::H264);
    assert!(ix.keys.len() >= 6 && ix.keys[1] == 20, "{:?}", ix.keys);
    let mut video = Video::new(Arc::clone(&ix), DEFAULT_BUDGET);
    let mut reader = bagscope_ops::media::video::PacketReader::default();
    let mut stream = Vec::new();
    for p in &ix.packets {
        stream.extend(reader.read(&bag, p).unwrap().data);
    }
    let es = dir.join("demo.h264");
    std::fs::write(&es, stream).unwrap();
    let want = v::framemd5(&es, "yuv420p");
    assert_eq!(want.len(), ix.frames.len());
    for (n, w) in want.iter().enumerate() {
        assert_eq!(
            md5(&video.frame(&bag, n)).as_deref(),
            Some(w.as_str()),
            "frame {n}"
        );
    }
}
