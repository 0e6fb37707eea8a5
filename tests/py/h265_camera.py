"""An H.265 camera with a state and an action beside it, logged by Foxglove's SDK: ffmpeg's
libx265 encodes testsrc2 (320×240, 30 fps, a key frame every 30, B-frames) as Annex B with
access unit delimiters, cut at them into `foxglove.CompressedVideo` messages (`format: h265`)
on `/camera`; `/state` and `/action` are `foxglove.Vector3` at the same times (state x = frame,
y = 2·frame; action x = 0.5·frame) (python/tests/test_lerobot.py).

    python3 h265_camera.py OUT.mcap FRAMES
"""
import subprocess
import sys
import tempfile
from pathlib import Path

# The logging is av1_camera.py's (this script's folder is on the path when it runs).
from av1_camera import log_camera

AUD = b"\x00\x00\x00\x01\x46\x01"


def main(out, frames):
    with tempfile.TemporaryDirectory() as d:
        es = Path(d) / "s.hevc"
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=320x240:rate=30", "-frames:v", str(frames), "-pix_fmt",
                        "yuv420p", "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                        "aud=1:keyint=30:bframes=2:log-level=error", "-f", "hevc", str(es)],
                       check=True, stderr=subprocess.DEVNULL)
        data = es.read_bytes()
    units = [AUD + u for u in data.split(AUD) if u]
    log_camera(out, units, "h265")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
