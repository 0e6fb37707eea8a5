#!/usr/bin/env python3
"""Recordings for scripts/bench/live.py (ROS 1 bags written with rosbags, uncompressed).

- live_mixed.bag: 60 s of a 1080p rgb8 camera at 30 Hz (6.2 MB a frame), an IMU at 200 Hz and
  50 small std_msgs/Float64 topics at 10 Hz (11.2 GB): the lateness benchmark.
- live_small.bag: 200,000 std_msgs/Float64 on 10 topics recorded within 2 s (100 kHz), which
  no player keeps up with: the largest rate a player sustains.
- live_10k.bag: 50 std_msgs/Float64 topics at 200 Hz for 60 s (10,000 messages/s): the
  recorders' load.

    python3 scripts/data/live_bags.py --out bench-bags [--only mixed|small|10k]
"""
import argparse
from pathlib import Path

import numpy as np
from rosbags.rosbag1 import Writer
from rosbags.typesys import Stores, get_typestore

TS = get_typestore(Stores.ROS1_NOETIC)
T = TS.types
START = 1_700_000_000_000_000_000


def float64(v):
    return TS.serialize_ros1(T['std_msgs/msg/Float64'](v), 'std_msgs/msg/Float64')


def write(path, topics, events):
    """topics: [(name, type)], events: sorted [(t_ns, topic index, bytes-maker)]."""
    if path.exists():
        path.unlink()
    w = Writer(path)
    w.open()
    conns = [w.add_connection(n, t, typestore=TS, callerid='/bench_source') for n, t in topics]
    n = 0
    for t, k, data in events:
        w.write(conns[k], t, data)
        n += 1
    w.close()
    print(f'{path}: {n} messages, {path.stat().st_size / 1e9:.2f} GB')


def mixed(out):
    topics = [('/camera/image_raw', 'sensor_msgs/msg/Image'), ('/imu', 'sensor_msgs/msg/Imu')]
    topics += [(f'/small_{k:02d}', 'std_msgs/msg/Float64') for k in range(50)]
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, 1920 * 1080 * 3, dtype=np.uint8)
    Header, Time = T['std_msgs/msg/Header'], T['builtin_interfaces/msg/Time']
    Image, Imu = T['sensor_msgs/msg/Image'], T['sensor_msgs/msg/Imu']
    Q, V = T['geometry_msgs/msg/Quaternion'], T['geometry_msgs/msg/Vector3']
    cov = np.zeros(9)

    def image(t, seq):
        h = Header(seq, Time(t // 10**9, t % 10**9), 'camera')
        return TS.serialize_ros1(Image(h, 1080, 1920, 'rgb8', 0, 1920 * 3, pixels),
                                 'sensor_msgs/msg/Image')

    def imu(t, seq):
        h = Header(seq, Time(t // 10**9, t % 10**9), 'imu')
        return TS.serialize_ros1(Imu(h, Q(0.0, 0.0, 0.0, 1.0), cov, V(0.0, 0.0, 0.1), cov,
                                     V(0.0, 0.1, 9.81), cov), 'sensor_msgs/msg/Imu')

    ev = []
    for i in range(60 * 30):
        ev.append((START + i * 1_000_000_000 // 30, 0, i))
    for i in range(60 * 200):
        ev.append((START + 1_000_000 + i * 5_000_000, 1, i))
    for k in range(50):
        for i in range(60 * 10):
            ev.append((START + 2_000_000 + k * 1_900_000 + i * 100_000_000, 2 + k, i))
    ev.sort()

    def gen():
        for t, k, i in ev:
            yield t, k, image(t, i) if k == 0 else imu(t, i) if k == 1 else float64(float(i))
    write(out / 'live_mixed.bag', topics, gen())


def small(out):
    topics = [(f'/fast_{k}', 'std_msgs/msg/Float64') for k in range(10)]
    ev = ((START + i * 10_000, i % 10, float64(float(i))) for i in range(200_000))
    write(out / 'live_small.bag', topics, ev)


def tenk(out):
    topics = [(f'/load_{k:02d}', 'std_msgs/msg/Float64') for k in range(50)]
    ev = []
    for k in range(50):
        for i in range(60 * 200):
            ev.append((START + k * 100_000 + i * 5_000_000, k, i))
    ev.sort()
    write(out / 'live_10k.bag', topics, ((t, k, float64(float(i))) for t, k, i in ev))


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='bench-bags')
    ap.add_argument('--only', choices=['mixed', 'small', '10k'])
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, f in [('small', small), ('10k', tenk), ('mixed', mixed)]:
        if a.only in (None, name):
            f(out)
