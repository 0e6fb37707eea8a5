#!/usr/bin/env python3
"""Time the peer library rosbags (0.11.9) on a ROS 2 recording (rosbag2 directory, SQLite or
MCAP storage), the counterpart of ../shared/tools/peer_bench.py, which reads ROS 1 bags only.

Usage: python3 scripts/bench/peer_ros2_storages.py OP PATH [--topic /imu] [--field linear_acceleration.x]
  OP: info     open the recording and list topics, types, counts, start and end
      iterate  read every message in time order, touching every byte of each payload
      field    deserialize every message of --topic and collect the numeric --field
Prints one JSON object: {"tool": "rosbags", "op", "bag", "seconds" (the operation alone, after
imports), "result"}.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore


def op_info(p: Path, a) -> dict:
    with Reader(p) as r:
        return {'messages': r.message_count, 'start_ns': r.start_time, 'end_ns': r.end_time - 1,
                'topics': {t: {'type': i.msgtype, 'messages': i.msgcount} for t, i in r.topics.items()}}


def op_iterate(p: Path, a) -> dict:
    n = nbytes = 0
    with Reader(p) as r:
        for _c, _t, raw in r.messages():
            n += 1
            nbytes += len(raw)
    return {'messages': n, 'bytes': nbytes}


def op_field(p: Path, a) -> dict:
    store = get_typestore(Stores.ROS2_HUMBLE)
    vals = []
    with Reader(p) as r:
        conns = [c for c in r.connections if c.topic == a.topic]
        for c, _t, raw in r.messages(connections=conns):
            m = store.deserialize_cdr(raw, c.msgtype)
            for part in a.field.split('.'):
                m = getattr(m, part)
            vals.append(float(m))
    return {'values': len(vals), 'sum': sum(vals)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('op', choices=['info', 'iterate', 'field'])
    ap.add_argument('bag', type=Path)
    ap.add_argument('--topic', default='/imu')
    ap.add_argument('--field', default='linear_acceleration.x')
    a = ap.parse_args()
    t0 = time.perf_counter()
    res = {'info': op_info, 'iterate': op_iterate, 'field': op_field}[a.op](a.bag, a)
    dt = time.perf_counter() - t0
    print(json.dumps({'tool': 'rosbags', 'op': a.op, 'bag': str(a.bag), 'seconds': dt, 'result': res}))


if __name__ == '__main__':
    main()
