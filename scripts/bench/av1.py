#!/usr/bin/env python3
"""AV1 decoding, bagscope against ffmpeg's libdav1d and libaom, side by side in one run: a 720p
stream (300 frames of testsrc2, a key frame every 30) made by ffmpeg's SVT-AV1, logged into an
MCAP by Foxglove's SDK (`foxglove.CompressedVideo`, format `av1`, a temporal unit a message),
decoded on one core (`taskset -c 0`): `bagscope bench REC --op video-decode` (the packets in
memory, one decoder) against `ffmpeg -threads 1 -c:v DECODER -i stream.obu -f null -` (best of
3 each; ffmpeg's time includes its start).

    python3 scripts/bench/av1.py [BAGSCOPE...]

Each BAGSCOPE is a binary to measure (default target/release/bagscope): a build with rav1d's
Rust alone (`cargo build --release`) and one with its assembly (`--features av1-asm`, needs
nasm) side by side. Needs ffmpeg and the pip foxglove-sdk.
"""
import json
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "tests" / "py" / "foxglove_video.py"
sys.path.insert(0, str(ROOT / "tests" / "py"))
from av1_camera import temporal_units  # noqa: E402


def best_of(cmd, runs=3):
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def main():
    bins = [Path(b) for b in sys.argv[1:]] or [ROOT / "target" / "release" / "bagscope"]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        obu = d / "s.obu"
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=1280x720:rate=30", "-frames:v", "300", "-pix_fmt", "yuv420p",
                        "-c:v", "libsvtav1", "-preset", "12", "-g", "30", "-f", "obu", str(obu)],
                       check=True, stderr=subprocess.DEVNULL)
        tus = temporal_units(obu.read_bytes())
        aus = d / "aus"
        aus.write_bytes(b"".join(struct.pack("<I", len(u)) + u for u in tus))
        mcap = d / "av1.mcap"
        subprocess.run([sys.executable, str(WRITER), str(aus), str(mcap), "av1"], check=True)
        print(f"720p AV1 (SVT-AV1 preset 12), {len(tus)} frames, one core\n")
        print("| decoder | frames a second | ms a frame |")
        print("|---|---|---|")
        for b in bins:
            out = subprocess.run(["taskset", "-c", "0", str(b), "bench", str(mcap), "--op",
                                  "video-decode", "--runs", "3"], check=True, capture_output=True,
                                 text=True)
            r = json.loads(out.stdout)["video-decode"]
            assert r["frames"] == len(tus), r
            print(f"| bagscope ({b}) | {r['frames_per_s']:.1f} | {1e3 / r['frames_per_s']:.2f} |",
                  flush=True)
        for dec in ["libdav1d", "libaom-av1"]:
            s = best_of(["taskset", "-c", "0", "ffmpeg", "-hide_banner", "-loglevel", "error",
                         "-threads", "1", "-c:v", dec, "-i", str(obu), "-f", "null", "-"])
            print(f"| ffmpeg {dec} | {len(tus) / s:.1f} | {1e3 * s / len(tus):.2f} |", flush=True)


if __name__ == "__main__":
    main()
