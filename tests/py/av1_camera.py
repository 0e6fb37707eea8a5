"""An AV1 camera with a state and an action beside it, logged by Foxglove's SDK: ffmpeg's
SVT-AV1 encodes testsrc2 (320×240, 30 fps, a key frame every 30) as an OBU stream, cut at its
temporal delimiters into `foxglove.CompressedVideo` messages (`format: av1`) on `/camera`;
`/state` and `/action` are `foxglove.Vector3` at the same times (state x = frame, y = 2·frame;
action x = 0.5·frame) (python/tests/test_lerobot.py).

    python3 av1_camera.py OUT.mcap FRAMES
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import foxglove
from foxglove.messages import CompressedVideo, Timestamp, Vector3

T0 = 1_700_000_000 * 10**9
PERIOD = 33_333_333


def temporal_units(data):
    """An OBU stream cut at its temporal delimiters (OBU type 2)."""
    units, start, at = [], 0, 0
    while at < len(data):
        h = data[at]
        kind, ext = (h >> 3) & 15, (h >> 2) & 1
        p = at + 1 + ext
        size, shift = 0, 0
        while True:
            b = data[p]
            p += 1
            size |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if kind == 2 and at > start:
            units.append(data[start:at])
            start = at
        at = p + size
    units.append(data[start:])
    return units


def main(out, frames):
    with tempfile.TemporaryDirectory() as d:
        obu = Path(d) / "s.obu"
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=320x240:rate=30", "-frames:v", str(frames), "-pix_fmt",
                        "yuv420p", "-c:v", "libsvtav1", "-preset", "12", "-g", "30", "-f", "obu",
                        str(obu)], check=True, stderr=subprocess.DEVNULL)
        tus = temporal_units(obu.read_bytes())
    log_camera(out, tus, "av1")


def log_camera(out, units, fmt):
    """`units` (a frame's packet each) as `/camera` in `fmt`, with `/state` and `/action` at the
    same times, into the MCAP `out` (also h265_camera.py's)."""
    with foxglove.open_mcap(out, allow_overwrite=True):
        for i, unit in enumerate(units):
            t = T0 + i * PERIOD
            stamp = Timestamp(sec=t // 10**9, nsec=t % 10**9)
            foxglove.log("/camera", CompressedVideo(timestamp=stamp, frame_id="camera", data=unit,
                                                    format=fmt), log_time=t)
            foxglove.log("/state", Vector3(x=float(i), y=2.0 * i, z=0.0), log_time=t)
            foxglove.log("/action", Vector3(x=0.5 * i, y=0.0, z=0.0), log_time=t)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
