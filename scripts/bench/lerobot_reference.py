#!/usr/bin/env python3
"""A reference ROS-bag → LeRobot converter, written the way today's converters are (rosbags to
read, PyAV to decode every camera frame and encode it again with LeRobot's default codec,
libsvtav1; pyarrow for the table), for the benchmark against `bagscope export --format lerobot`
(scripts/bench/lerobot.py). It writes the frames' table and one video per camera; not the whole
v3 layout: the timing is what is compared.

    python3 scripts/bench/lerobot_reference.py BAG OUT_DIR FPS STATE_PATHS ACTION_PATHS CAMERA...

STATE_PATHS / ACTION_PATHS: comma-separated `topic:attr.attr` (`/odom:pose.pose.position.x`).
CAMERA: a foxglove_msgs/CompressedVideo topic (H.264); the same topic may be given twice.
Needs `pip install rosbags av pyarrow numpy`.
"""
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from rosbags.highlevel import AnyReader


def getter(spec):
    topic, attrs = spec.split(":", 1)

    def get(msg):
        for a in attrs.split("."):
            msg = getattr(msg, a)
        return float(msg)

    return topic, get


def main():
    bag, out, fps = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    state = [getter(s) for s in sys.argv[4].split(",")]
    action = [getter(s) for s in sys.argv[5].split(",")]
    cameras = sys.argv[6:]
    out.mkdir(parents=True, exist_ok=True)
    topics = {t for t, _ in state + action} | set(cameras)
    series = {}
    frames = {c: [] for c in set(cameras)}
    with AnyReader([bag]) as rd:
        conns = [c for c in rd.connections if c.topic in topics]
        decoders = {c: av.CodecContext.create("h264", "r") for c in set(cameras)}
        for c, t, raw in rd.messages(connections=conns):
            msg = rd.deserialize(raw, c.msgtype)
            if c.topic in frames:
                # Every frame decoded to RGB, as converters hand images to LeRobot.
                for p in decoders[c.topic].parse(bytes(msg.data)):
                    for f in decoders[c.topic].decode(p):
                        frames[c.topic].append((t, f.to_ndarray(format="rgb24")))
            else:
                series.setdefault(c.topic, []).append((t, msg))
    cam0 = np.array([t for t, _ in frames[cameras[0]]])
    step = 10**9 // fps
    ticks = np.arange(cam0[0], cam0[-1] + 1, step)
    rows = {"state": [], "action": [], "timestamp": []}
    picked = {c: [] for c in set(cameras)}
    for k, t in enumerate(ticks):
        def held(topic, get):
            v = series[topic]
            i = np.searchsorted([x for x, _ in v], t, side="right") - 1
            return get(v[i][1]) if i >= 0 else None
        st = [held(tp, g) for tp, g in state]
        ac = [held(tp, g) for tp, g in action]
        if any(v is None for v in st + ac):
            continue
        for c in picked:
            times = np.array([x for x, _ in frames[c]])
            j = int(np.argmin(np.abs(times - t)))
            picked[c].append(frames[c][j][1])
        rows["state"].append(np.float32(st))
        rows["action"].append(np.float32(ac))
        rows["timestamp"].append(np.float32(k / fps))
    n = len(rows["timestamp"])
    table = pa.table({
        "observation.state": pa.array(rows["state"], type=pa.list_(pa.float32(), len(state))),
        "action": pa.array(rows["action"], type=pa.list_(pa.float32(), len(action))),
        "timestamp": pa.array(rows["timestamp"], type=pa.float32()),
        "frame_index": pa.array(np.arange(n), type=pa.int64()),
    })
    pq.write_table(table, out / "data.parquet")
    # Each camera encoded again, with LeRobot's default codec and settings.
    for k, cam in enumerate(cameras):
        imgs = picked[cam]
        with av.open(str(out / f"camera{k}.mp4"), "w") as f:
            s = f.add_stream("libsvtav1", rate=fps)
            s.pix_fmt = "yuv420p"
            s.width, s.height = imgs[0].shape[1], imgs[0].shape[0]
            s.options = {"g": "2", "crf": "30"}
            s.time_base = Fraction(1, fps)
            for i, img in enumerate(imgs):
                vf = av.VideoFrame.from_ndarray(img, format="rgb24")
                vf.pts = i
                for p in s.encode(vf):
                    f.mux(p)
            for p in s.encode():
                f.mux(p)
    print(f"{n} frames, {len(cameras)} cameras")


if __name__ == "__main__":
    main()
