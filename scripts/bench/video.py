#!/usr/bin/env python3
"""Compressed video against ffmpeg (Debian's, libavcodec), side by side in one run:

- decode throughput of 1080p30 H.264 (x264 High, B-frames) and H.265 (x265, B-frames) on one
  core (`taskset -c 0`): bagscope's decoders on the packets in memory against
  `ffmpeg -threads 1 -i stream -f null -` (best of 3 each; ffmpeg's time includes its start);
- random seeks to the exact frame, 720p and 1080p, GOP 30 and 120, on two cores: bagscope
  reading the recording (a fresh reader a seek: nothing cached), the frame decoded and made RGB,
  against `ffmpeg -ss T -i stream.mp4 -frames:v 1 -pix_fmt rgb24 -f rawvideo` on the same
  stream muxed into MP4 (an indexed container), whole processes, for the same times.

    python3 scripts/bench/video.py [SEEKS] [--seek-only] [--old BAGSCOPE]

`--old` runs the seeks of another build of bagscope (an earlier commit's release build) on the
same recordings and times in the same run, in a column of its own.

Needs target/release/bagscope (`cargo build --release`), ffmpeg, and the pip foxglove-sdk
(the recording is written by tests/py/foxglove_video.py). Streams are 300 frames of testsrc2.
"""
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BAGSCOPE = ROOT / "target" / "release" / "bagscope"
WRITER = ROOT / "tests" / "py" / "foxglove_video.py"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def make(d, name, size, codec, gop):
    ext = "h264" if codec == "h264" else "hevc"
    es = d / f"{name}.{ext}"
    enc = (
        ["-c:v", "libx264", "-profile:v", "high", "-preset", "veryfast", "-bf", "3",
         "-g", str(gop), "-keyint_min", str(gop), "-sc_threshold", "0", "-x264-params", "aud=1"]
        if codec == "h264"
        else ["-c:v", "libx265", "-preset", "veryfast", "-x265-params",
              f"keyint={gop}:min-keyint={gop}:bframes=4:scenecut=0:aud=1:log-level=error"]
    )
    sh(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        f"testsrc2=size={size}:rate=30", "-frames:v", "300", "-pix_fmt", "yuv420p", *enc, str(es)])
    data = es.read_bytes()
    aud = b"\x00\x00\x00\x01\x09" if codec == "h264" else b"\x00\x00\x00\x01\x46\x01"
    aus = [aud + p for p in data.split(aud) if p]
    (d / f"{name}.aus").write_bytes(b"".join(struct.pack("<I", len(a)) + a for a in aus))
    mcap = d / f"{name}.mcap"
    sh([sys.executable, str(WRITER), str(d / f"{name}.aus"), str(mcap), codec])
    mp4 = d / f"{name}.mp4"
    sh(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-r", "30", "-i", str(es),
        "-c", "copy", str(mp4)])
    return es, mcap, mp4, len(aus)


def bench(mcap, op, runs, cores, binary=BAGSCOPE):
    out = subprocess.run(["taskset", "-c", cores, str(binary), "bench", str(mcap), "--op", op,
                          "--runs", str(runs)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)[op]


def ffmpeg_decode(es):
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        sh(["taskset", "-c", "0", "ffmpeg", "-hide_banner", "-loglevel", "error", "-threads", "1",
            "-i", str(es), "-f", "null", "-"])
        best = min(best, time.perf_counter() - t)
    return best


def ffmpeg_seeks(mp4, times_ns):
    ms = []
    for t in times_ns:
        t0 = time.perf_counter()
        sh(["taskset", "-c", "0,1", "ffmpeg", "-hide_banner", "-loglevel", "error",
            "-ss", f"{t / 1e9:.6f}", "-i", str(mp4), "-frames:v", "1", "-pix_fmt", "rgb24",
            "-f", "rawvideo", "-y", "/dev/null"])
        ms.append((time.perf_counter() - t0) * 1e3)
    return ms


def q(xs, p):
    s = sorted(xs)
    return s[round((len(s) - 1) * p)]


def main():
    args = sys.argv[1:]
    old = None
    if "--old" in args:
        i = args.index("--old")
        old = Path(args[i + 1])
        del args[i:i + 2]
    seek_only = "--seek-only" in args
    args = [a for a in args if a != "--seek-only"]
    seeks = int(args[0]) if args else 100
    with tempfile.TemporaryDirectory(prefix="bagscope-video-bench-") as tmp:
        d = Path(tmp)
        if not seek_only:
            print("## Decode throughput, 1080p30, one core\n")
            print("| stream | bagscope frames/s | ffmpeg -threads 1 frames/s | ratio |")
            print("|---|---|---|---|")
            for codec in ["h264", "h265"]:
                es, mcap, _, n = make(d, f"dec-{codec}", "1920x1080", codec, 30)
                ours = bench(mcap, "video-decode", 3, "0")
                theirs = n / ffmpeg_decode(es)
                print(f"| {codec} 1080p, 300 frames | {ours['frames_per_s']:.1f} | {theirs:.1f} | "
                      f"{ours['frames_per_s'] / theirs:.2f} |", flush=True)
            print()
        print(f"## Random seek to the exact frame, two cores, {seeks} seeks\n")
        before = " before p50 / p99 ms |" if old else ""
        print(f"| stream |{before} bagscope p50 / p99 ms | ffmpeg -ss on MP4 p50 / p99 ms | "
              "ratio p50 / p99 |")
        print("|---|---|---|---|" + ("---|" if old else ""))
        for size, label in [("1280x720", "720p"), ("1920x1080", "1080p")]:
            for gop in [30, 120]:
                for codec in ["h264", "h265"]:
                    _, mcap, mp4, _ = make(d, f"seek-{label}-{gop}-{codec}", size, codec, gop)
                    ours = bench(mcap, "video-seek", seeks, "0,1")
                    was = ""
                    if old:
                        o = bench(mcap, "video-seek", seeks, "0,1", old)
                        assert o["times_ns"] == ours["times_ns"], "the two builds seek to other frames"
                        was = f" {o['p50_ms']:.1f} / {o['p99_ms']:.1f} |"
                    theirs = ffmpeg_seeks(mp4, ours["times_ns"])
                    p50, p99 = q(theirs, 0.5), q(theirs, 0.99)
                    print(f"| {codec} {label} GOP {gop} |{was} {ours['p50_ms']:.1f} / {ours['p99_ms']:.1f} | "
                          f"{p50:.1f} / {p99:.1f} | {ours['p50_ms'] / p50:.2f} / "
                          f"{ours['p99_ms'] / p99:.2f} |", flush=True)


if __name__ == "__main__":
    main()
