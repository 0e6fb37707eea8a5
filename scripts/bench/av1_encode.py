#!/usr/bin/env python3
"""AV1 encoders side by side, for the LeRobot export's cameras that are not video.

Usage: python3 scripts/bench/av1_encode.py BAGSCOPE... [--size 1280x720] [--frames 90] [--runs 2]

(several BAGSCOPE executables: e.g. a build without and one with `--features av1-asm`)

The same pictures (ffmpeg's testsrc2, 30 fps) through:

- **bagscope** (rav1e 0.8, its fastest preset, in-process): `BAGSCOPE export REC --format
  lerobot` of a recording of `foxglove.RawImage` (rgb8) messages (logged by Foxglove's SDK),
  one camera on a 30 fps clock, so every picture is encoded; timed whole (reading the
  recording, converting to YUV, encoding, muxing);
- **ffmpeg** with SVT-AV1 (`-preset 12`), libaom (`-cpu-used 8 -usage realtime`) and
  rav1e (`-speed 10`) from the same pictures as raw RGB, each its own `rgb24` → `yuv420p`.

For each: seconds (best of --runs), frames a second, bytes, and PSNR against the pictures
(frames decoded by ffmpeg in order, RGB, over
the frames both have: bagscope's export ends at the clock's last tick, one picture short). The licences: rav1e BSD-2-Clause, SVT-AV1 BSD-3-Clause-Clear
with the AOMedia patent licence, libaom BSD-2-Clause with the same patent licence.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = 1_700_000_000 * 10**9


def timed(cmd, runs):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def psnr(video, raw, size):
    """PSNR (dB) of the video's frames, decoded in order, against the pictures (RGB, over
    the frames both have)."""
    import numpy as np

    w, h = (int(x) for x in size.split("x"))
    dec = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", str(video),
                          "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    a = np.frombuffer(dec, np.uint8).reshape(-1, h, w, 3)
    b = np.fromfile(raw, np.uint8).reshape(-1, h, w, 3)
    n = min(len(a), len(b))
    mse = np.mean((a[:n].astype(np.float64) - b[:n]) ** 2)
    return f"{10 * np.log10(255 ** 2 / mse):.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bagscope", nargs="+")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--frames", type=int, default=90)
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    d = Path(tempfile.mkdtemp(prefix="av1enc-"))
    raw = d / "frames.rgb"
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    f"testsrc2=size={a.size}:rate=30", "-frames:v", str(a.frames), "-f", "rawvideo",
                    "-pix_fmt", "rgb24", str(raw)], check=True)
    import foxglove
    from foxglove.messages import RawImage, Timestamp, Vector3

    rec = d / "rec.mcap"
    data = raw.read_bytes()
    n = w * h * 3
    with foxglove.open_mcap(str(rec), allow_overwrite=True):
        for i in range(a.frames):
            t = T0 + i * 33_333_333
            stamp = Timestamp(sec=t // 10**9, nsec=t % 10**9)
            foxglove.log("/raw", RawImage(timestamp=stamp, frame_id="cam", width=w, height=h,
                                          encoding="rgb8", step=3 * w, data=data[i * n:(i + 1) * n]),
                         log_time=t)
            foxglove.log("/state", Vector3(x=float(i), y=0.0, z=0.0), log_time=t)
    mapping = d / "map.yaml"
    mapping.write_text("fps: 30\ntask: t\nalign: nearest\ntolerance: 0.005\nmissing: drop\n"
                       "episodes: recording\nobservation.state: [/state.x]\naction: [/state.y]\n"
                       "observation.images.cam: /raw\n")
    rows = []
    ds = d / "ds"
    for k, exe in enumerate(a.bagscope):
        t = timed(["sh", "-c", f"rm -rf {ds} && {exe} export {rec} --format lerobot --mapping "
                   f"{mapping} -o {ds}"], a.runs)
        kept = d / f"bagscope-{k}.mp4"
        next(ds.rglob("*.mp4")).rename(kept)
        rows.append((f"`{Path(exe).name}` export (rav1e 0.8 in-process; reading, YUV, encoding, MP4)", t, kept))
    peers = [
        ("ffmpeg SVT-AV1 `-preset 12 -crf 35`", ["-c:v", "libsvtav1", "-preset", "12", "-crf", "35"]),
        ("ffmpeg libaom `-cpu-used 8 -usage realtime -crf 35`",
         ["-c:v", "libaom-av1", "-cpu-used", "8", "-usage", "realtime", "-crf", "35"]),
        ("ffmpeg rav1e `-speed 10 -qp 80`", ["-c:v", "librav1e", "-speed", "10", "-qp", "80"]),
    ]
    for name, args in peers:
        out = d / f"{len(rows)}.mp4"
        cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt",
               "rgb24", "-s", a.size, "-r", "30", "-i", str(raw), "-pix_fmt", "yuv420p", *args, str(out)]
        rows.append((name, timed(cmd, a.runs), out))
    print(f"| {a.frames} frames {a.size} | seconds | frames/s | KB | PSNR (dB) |")
    print("|---|---:|---:|---:|---:|")
    for name, t, out in rows:
        print(f"| {name} | {t:.2f} | {a.frames / t:.1f} | {out.stat().st_size // 1024} | "
              f"{psnr(out, raw, a.size)} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
