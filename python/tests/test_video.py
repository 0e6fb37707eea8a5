"""Recording.frames against ffmpeg: an x264 stream with B-frames made by Debian's ffmpeg,
written into an MCAP by Foxglove's SDK (protobuf foxglove.CompressedVideo); the frames come in
display order, each within swscale's rounding of ffmpeg's own RGB of that frame."""

import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import bagscope

HERE = os.path.dirname(os.path.abspath(__file__))
WRITER = os.path.join(HERE, "..", "..", "tests", "py", "foxglove_video.py")


def need_ffmpeg():
    if shutil.which("ffmpeg") is None:
        pytest.fail("ffmpeg is not installed: the test makes its stream with it (.ci/run installs it)")


def camera(tmp_path, frames):
    """An x264 stream of `frames` 320x240 frames (B-frames, a keyframe every 30) made by ffmpeg,
    and the MCAP of it as `/camera` (Foxglove's SDK): their paths."""
    need_ffmpeg()
    h264 = tmp_path / "cam.h264"
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
         "testsrc2=size=320x240:rate=30", "-frames:v", str(frames), "-pix_fmt", "yuv420p",
         "-c:v", "libx264", "-bf", "3", "-g", "30", "-x264-params", "aud=1", str(h264)],
        check=True,
    )
    data = h264.read_bytes()
    aus = [b"\x00\x00\x00\x01\x09" + p for p in data.split(b"\x00\x00\x00\x01\x09") if p]
    assert len(aus) == frames
    packed = b"".join(struct.pack("<I", len(a)) + a for a in aus)
    (tmp_path / "aus.bin").write_bytes(packed)
    mcap = tmp_path / "cam.mcap"
    subprocess.run(["python3", WRITER, str(tmp_path / "aus.bin"), str(mcap), "h264"], check=True)
    return h264, mcap


def test_frames_are_ffmpegs_frames(tmp_path):
    h264, mcap = camera(tmp_path, 60)
    rgb = subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-threads", "1", "-i", str(h264),
         "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True,
    ).stdout
    theirs = np.frombuffer(rgb, dtype=np.uint8).reshape(60, 240, 320, 3)
    with bagscope.open(mcap) as rec:
        frames = list(rec.frames("/camera"))
        assert rec.frames("/camera").total == 60
        # A window of times: frames 10 to 19.
        t0 = frames[10][0]
        window = list(rec.frames("/camera", start_ns=t0, end_ns=frames[20][0]))
    assert len(frames) == 60
    assert [t for t, _ in window] == [t for t, _ in frames[10:20]]
    times = [t for t, _ in frames]
    assert times == sorted(times) and len(set(times)) == 60
    for i, (_, f) in enumerate(frames):
        assert f.shape == (240, 320, 3) and f.dtype == np.uint8
        d = np.abs(f.astype(int) - theirs[i].astype(int))
        assert d.max() <= 3 and d.mean() < 1.0, (i, d.max(), d.mean())
    # Each frame is its own: the next frame of ffmpeg's differs from it by far more.
    assert np.abs(frames[5][1].astype(int) - theirs[6].astype(int)).mean() > 2.0


def test_two_threads_share_one_frames_iterator(tmp_path, in_two_threads):
    """Each frame goes to one of them, in display order, and neither waits forever: one decodes
    with the GIL let go while the other asks for a frame or the count."""
    _, mcap = camera(tmp_path, 90)
    with bagscope.open(mcap) as rec:
        whole = [(t, f.tobytes()) for t, f in rec.frames("/camera")]
        it = rec.frames("/camera")
        got = [[], []]
        totals = []

        def take(k):
            for t, f in it:
                got[k].append((t, f.tobytes()))
                totals.append(it.total)

        in_two_threads(take)
    assert len(whole) == 90
    assert sorted(got[0] + got[1]) == sorted(whole)
    assert all(g == sorted(g) for g in got)
    assert set(totals) == {90}


def test_frames_of_a_topic_that_is_not_video_is_an_error(bags_dir, expected):
    name = next(n for n in sorted(expected) if expected[n].get("topics"))
    with bagscope.open(bags_dir / name) as rec:
        topic = rec.topics[0].name
        with pytest.raises(bagscope.Error, match="no video packet"):
            rec.frames(topic)
