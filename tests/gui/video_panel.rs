//! A video topic in an image panel: the frame at the playhead after a seek and while the
//! playhead steps forward frame by frame (as playing does) is ffmpeg's frame; a recording
//! that starts mid-GOP says it is waiting for a keyframe.

use bagscope_app::Cmd;
use bagscope_ops::media::image::Pixels;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::common::video as v;
use crate::*;

/// The panel's frame number (from its label) and pixels, once it shows frame `n`.
fn shown(h: &mut Harness<'_, App>, n: usize) -> Vec<u8> {
    let label = format!("frame {} of", n + 1);
    wait_for(h, &label, |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.images.panels[0]
                .frame
                .as_ref()
                .is_some_and(|f| f.image.encoding.contains(&label))
        })
    });
    let d = h.state().doc.as_ref().unwrap();
    let f = d.images.panels[0].frame.as_ref().unwrap();
    match &f.image.pixels {
        Pixels::Rgba(p) => p.clone(),
        other => panic!("not RGBA: {other:?}"),
    }
}

#[test]
fn a_video_panel_shows_ffmpegs_frame_at_the_playhead() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x264-small-b");
    let rgb = v::rgb_frames(&s.path);
    let frame = 320 * 240 * 3;
    let dir = common::temp_dir("ui-video");
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, &s, &s.aus);
    let mut h = harness(Some(path));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("image").click();
    h.run_steps(2);
    // A seek into the middle of the second group, between two messages' times.
    h.state_mut()
        .apply(Cmd::SetPlayhead(v::T0 + 45 * v::PERIOD + v::PERIOD / 2));
    let px = shown(&mut h, 45);
    let (worst, mean) = v::rgb_diff(&px, &rgb[45 * frame..46 * frame]);
    assert!(worst <= 3 && mean < 1.0, "frame 45: {worst} {mean}");
    assert!(h.query_all_by_label_contains("320×240 h264").count() >= 1);
    // Forward a frame at a time across the next keyframe (60), as playing does.
    for n in 46..66 {
        h.state_mut()
            .apply(Cmd::SetPlayhead(v::T0 + n as u64 * v::PERIOD));
        let px = shown(&mut h, n);
        let (worst, mean) = v::rgb_diff(&px, &rgb[n * frame..(n + 1) * frame]);
        assert!(worst <= 3 && mean < 1.0, "frame {n}: {worst} {mean}");
    }
    assert!(h.state().doc.as_ref().unwrap().images.panels[0]
        .error
        .is_none());
}

#[test]
fn a_video_starting_mid_gop_waits_for_a_keyframe() {
    if !v::ffmpeg() {
        return;
    }
    let s = v::stream("x264-small-b");
    let dir = common::temp_dir("ui-video-midgop");
    let path = dir.join("camera.mcap");
    v::protobuf_mcap(&path, &s, &s.aus[5..]);
    let mut h = harness(Some(path));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("image").click();
    h.run_steps(2);
    wait_for(&mut h, "the panel's answer", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.images.panels[0]
                .error
                .as_ref()
                .is_some_and(|e| e.contains("waiting for a keyframe"))
        })
    });
    // From the first keyframe (frame 25 of this recording) on, frames.
    h.state_mut()
        .apply(Cmd::SetPlayhead(v::T0 + 25 * v::PERIOD));
    shown(&mut h, 25);
}

/// An MP4 file as LeRobot's datasets keep their cameras (AV1 by SVT-AV1) opened in the app: its
/// video track is the topic `/video`, and the image panel shows ffmpeg's frame at the playhead.
#[test]
fn an_av1_mp4_file_opens_as_a_recording_of_its_video() {
    if !v::ffmpeg() {
        return;
    }
    let dir = common::temp_dir("ui-video-mp4");
    let mp4 = dir.join("observation.images.front.mp4");
    v::encode(&mp4, "320x240", 90, "yuv420p", v::SVT_AV1);
    let rgb = v::rgb_frames(&mp4);
    let frame = 320 * 240 * 3;
    let mut h = harness(Some(mp4.clone()));
    wait_for(&mut h, "indexing", indexed);
    let t0 = {
        let d = h.state().doc.as_ref().unwrap();
        // Named as the user opened it, not as the recording made in the cache.
        assert_eq!(d.rec.path, mp4);
        let t = d
            .rec
            .bag
            .summary()
            .topic("/video")
            .expect("the video track");
        assert_eq!(t.message_count, 90);
        d.rec.range().0
    };
    h.get_by_label("image").click();
    h.run_steps(2);
    // Frame 45 is shown from 1.5 s on (30 frames a second from 0).
    h.state_mut()
        .apply(Cmd::SetPlayhead(t0 + 1_500_000_000 + 10_000_000));
    let px = shown(&mut h, 45);
    let (worst, mean) = v::rgb_diff(&px, &rgb[45 * frame..46 * frame]);
    assert!(worst <= 3 && mean < 1.0, "frame 45: {worst} {mean}");
    assert!(h.query_all_by_label_contains("320×240 av1").count() >= 1);
}
