#!/usr/bin/env python3
"""Benchmark recordings in the ROS 2 storages, the counterpart of ../shared/tools/gen_bench_bags.py's
many_small bag: 5,000,000 small messages on 50 topics (10 each at 100/500/1000/1500/1900 Hz,
one 1000 Hz topic a real sensor_msgs/Imu, the rest PointStamped and Float64), written by the
peer's own writers so that bagscope reads what others write:

  bench-bags/many_small_sqlite3/   rosbag2, SQLite storage (rosbags' Writer)
  bench-bags/many_small_mcap/      rosbag2, MCAP storage (rosbags' Writer)
  bench-bags/many_small_zstd.mcap  standalone MCAP, zstd chunks (the `mcap` package's Writer)

Usage: python3 scripts/data/bench_bags_ros2.py [--out DIR] [--messages N]
Deterministic: fixed seed and start time. Needs: pip install -r ../shared/tools/requirements.txt
"""
from __future__ import annotations

import argparse
import json
import shutil
import struct
import time
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

START_NS = 1_700_000_000 * 10**9
TS = get_typestore(Stores.ROS2_HUMBLE)
CDR_LE = b'\x00\x01\x00\x00'


def topics():
    rates = [100, 500, 1000, 1500, 1900] * 10
    out = []
    for k in range(50):
        if k == 2:
            out.append(('/imu', 'sensor_msgs/msg/Imu', rates[k]))
        elif k % 2 == 0:
            out.append((f'/sensors/point_{k:02d}', 'geometry_msgs/msg/PointStamped', rates[k]))
        else:
            out.append((f'/sensors/value_{k:02d}', 'std_msgs/msg/Float64', rates[k]))
    return out


def schedule(n_messages: int, seed: int):
    rng = np.random.default_rng(seed)
    ts = topics()
    duration = n_messages / sum(r for _, _, r in ts)
    times, idx = [], []
    for k, (_, _, rate) in enumerate(ts):
        n = int(rate * duration)
        t = START_NS + ((np.arange(n) + (k + 1) / 51) * (1e9 / rate)).astype(np.int64)
        t += rng.integers(0, int(2e5), size=n)
        times.append(t)
        idx.append(np.full(n, k, dtype=np.int16))
    t = np.concatenate(times)
    i = np.concatenate(idx)
    order = np.argsort(t, kind='stable')
    return ts, t[order], i[order]


def imu_bytes(t_ns: int, v: float) -> bytes:
    Imu = TS.types['sensor_msgs/msg/Imu']
    H = TS.types['std_msgs/msg/Header']
    T = TS.types['builtin_interfaces/msg/Time']
    Q = TS.types['geometry_msgs/msg/Quaternion']
    V = TS.types['geometry_msgs/msg/Vector3']
    cov = np.zeros(9, dtype=np.float64)
    m = Imu(H(T(t_ns // 10**9, t_ns % 10**9), 'imu'), Q(0.0, 0.0, 0.0, 1.0), cov,
            V(0.0, 0.0, v), cov, V(v, 0.0, 9.81), cov)
    return bytes(TS.serialize_cdr(m, 'sensor_msgs/msg/Imu'))


def point_bytes(t_ns: int, v: float) -> bytes:
    # Header{stamp{int32 sec, uint32 nanosec}, string frame_id "map"} then Point at 8-alignment.
    return CDR_LE + struct.pack('<iII4s', t_ns // 10**9, t_ns % 10**9, 4, b'map\0') + struct.pack('<ddd', v, -v, 0.5)


def float_bytes(v: float) -> bytes:
    return CDR_LE + struct.pack('<d', v)


def payloads(ts, t, i):
    imu_template = imu_bytes(int(t[0]), 0.0)
    for n in range(len(t)):
        k = int(i[n])
        tn = int(t[n])
        v = float(n % 1000) * 0.001
        kind = ts[k][1]
        if kind == 'sensor_msgs/msg/Imu':
            # The template's stamp and two fields patched in: the same bytes serialize_cdr gives.
            b = bytearray(imu_template)
            struct.pack_into('<iI', b, 4, tn // 10**9, tn % 10**9)
            yield k, tn, bytes(b)
        elif kind == 'geometry_msgs/msg/PointStamped':
            yield k, tn, point_bytes(tn, v)
        else:
            yield k, tn, float_bytes(v)


def write_rosbag2(path: Path, plugin, ts, t, i):
    if path.exists():
        shutil.rmtree(path)
    with Writer(path, version=8, storage_plugin=plugin) as w:
        conns = [w.add_connection(name, ty, typestore=TS) for name, ty, _ in ts]
        for k, tn, b in payloads(ts, t, i):
            w.write(conns[k], tn, b)


def write_mcap(path: Path, ts, t, i):
    from mcap.writer import CompressionType, Writer as McapWriter
    with open(path, 'wb') as f:
        w = McapWriter(f, compression=CompressionType.ZSTD, chunk_size=1 << 20)
        w.start(profile='ros2', library='bagscope gen_bench_bags2.py')
        chans = []
        for name, ty, _ in ts:
            text, _ = TS.generate_msgdef(ty, ros_version=2)
            sid = w.register_schema(ty, 'ros2msg', text.encode())
            chans.append(w.register_channel(name, 'cdr', sid))
        for n, (k, tn, b) in enumerate(payloads(ts, t, i)):
            w.add_message(chans[k], log_time=tn, data=b, publish_time=tn, sequence=n)
        w.finish()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--out', type=Path, default=Path('bench-bags'))
    p.add_argument('--messages', type=int, default=5_000_000)
    p.add_argument('--seed', type=int, default=7)
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ts, t, i = schedule(a.messages, a.seed)
    stats = {'messages': int(len(t))}
    for name, fn in [
        ('many_small_sqlite3', lambda p: write_rosbag2(p, StoragePlugin.SQLITE3, ts, t, i)),
        ('many_small_mcap', lambda p: write_rosbag2(p, StoragePlugin.MCAP, ts, t, i)),
        ('many_small_zstd.mcap', lambda p: write_mcap(p, ts, t, i)),
    ]:
        t0 = time.time()
        fn(a.out / name)
        stats[name] = {'seconds': round(time.time() - t0, 1)}
        print(name, stats[name], flush=True)
    (a.out / 'gen_stats2.json').write_text(json.dumps(stats, indent=1))


if __name__ == '__main__':
    main()
