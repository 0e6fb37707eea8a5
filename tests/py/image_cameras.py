"""Two cameras that are not video, with a state and an action beside them, logged by Foxglove's
SDK: `/raw` as `foxglove.RawImage` (rgb8) and `/jpeg` as `foxglove.CompressedImage` (OpenCV's
JPEG, quality 95) and `/png` as `foxglove.CompressedImage` (OpenCV's PNG), all 320×240 at 30 fps, a gradient with a square moving across it (the
picture of frame i is `picture(i)`); two depth cameras of the same size and times, `/depth` as
`RawImage` 16UC1 (mm) and `/depth32` as 32FC1 (m), both of `depth(i)`; `/state` and `/action`
are `foxglove.Vector3` at the same times (state x = frame, y = 2·frame; action x = 0.5·frame)
(python/tests/test_lerobot.py).

    python3 image_cameras.py OUT.mcap FRAMES
"""
import sys

import cv2
import foxglove
import numpy as np
from foxglove.messages import CompressedImage, RawImage, Timestamp, Vector3

T0 = 1_700_000_000 * 10**9
PERIOD = 33_333_333
W, H = 320, 240


def picture(i):
    """Frame i: RGB, H×W×3 uint8."""
    y, x = np.mgrid[0:H, 0:W]
    img = np.stack([x * 255 // (W - 1), y * 255 // (H - 1), np.full_like(x, 96)], axis=-1)
    s = 8 * i % (W - 60)
    img[90:150, s:s + 60] = (230, 40, 40)
    return img.astype(np.uint8)


def depth(i):
    """Frame i's depth in metres, H×W float32: a ramp from 0.5 m (left) to 4.5 m (right), a
    square at 1.0 m moving across it, no return (0) in the top ten rows."""
    y, x = np.mgrid[0:H, 0:W]
    d = 0.5 + 4.0 * x / (W - 1)
    s = 8 * i % (W - 60)
    d[90:150, s:s + 60] = 1.0
    d[:10] = 0.0
    # Whole millimetres, so that 16UC1 and 32FC1 hold the same depths.
    return (np.round(d * 1000) / 1000).astype(np.float32)


def main(out, frames):
    with foxglove.open_mcap(out, allow_overwrite=True):
        for i in range(frames):
            t = T0 + i * PERIOD
            stamp = Timestamp(sec=t // 10**9, nsec=t % 10**9)
            rgb = picture(i)
            foxglove.log("/raw", RawImage(timestamp=stamp, frame_id="raw", width=W, height=H,
                                          encoding="rgb8", step=3 * W, data=rgb.tobytes()),
                          log_time=t)
            ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
                                    [cv2.IMWRITE_JPEG_QUALITY, 95])
            assert ok
            foxglove.log("/jpeg", CompressedImage(timestamp=stamp, frame_id="jpeg",
                                                  data=jpeg.tobytes(), format="jpeg"), log_time=t)
            ok, png = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
            assert ok
            foxglove.log("/png", CompressedImage(timestamp=stamp, frame_id="png",
                                                 data=png.tobytes(), format="png"), log_time=t)
            d = depth(i)
            foxglove.log("/depth", RawImage(timestamp=stamp, frame_id="depth", width=W, height=H,
                                            encoding="16UC1", step=2 * W,
                                            data=np.round(d * 1000).astype("<u2").tobytes()),
                          log_time=t)
            foxglove.log("/depth32", RawImage(timestamp=stamp, frame_id="depth", width=W,
                                              height=H, encoding="32FC1", step=4 * W,
                                              data=d.astype("<f4").tobytes()), log_time=t)
            foxglove.log("/state", Vector3(x=float(i), y=2.0 * i, z=0.0), log_time=t)
            foxglove.log("/action", Vector3(x=0.5 * i, y=0.0, z=0.0), log_time=t)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
