#!/usr/bin/env python3
"""The Python package against the Python peers, side by side in one run.

Usage: python3 scripts/bench/python.py [BAG_DIR] [--full]   (default: ./bench-bags, made by
       python3 ../shared/tools/gen_bench_bags.py --out bench-bags)
Needs the package installed (`pip install ./python`) and the peers: rosbags (requirements of
../shared/tools) and rosbags-dataframe with pandas (`pip install rosbags-dataframe`; the series
row is left out without it).

- series: three IMU fields of many_small_lz4.bag (5 M small messages, 100,000 on /imu) as numpy
  arrays (`Recording.series`) against rosbags-dataframe's `get_dataframe`;
- the same three fields on two image-heavy bags (cameras, clouds, IMU): big_none.bag (1.5 GB,
  uncompressed) and medium_bz2.bag (bz2);
- iterate and decode every message of /imu (100,000 `sensor_msgs/Imu`) and of whole bags
  (big_none, medium_bz2; with --full also the 5,000,000 of many_small_lz4, six minutes for
  rosbags) with `messages()` and `.msg`, against rosbags' `AnyReader` with `deserialize`.
- one topic to Arrow: /imu (100,000 sensor_msgs/msg/Imu) and /sensors/point_04 (190,000
  PointStamped) of many_small_zstd.mcap (scripts/data/bench_bags_ros2.py) as a `pyarrow.Table`
  (`Recording.to_arrow`) against roboto-mcap-codec's `open_mcap_file` (a Rust MCAP-to-Arrow
  codec; `pip install roboto-mcap-codec pyarrow`), each opening the file afresh;
- peak memory (maximum resident set of a fresh process) of iterating every message of a 5 GB
  bag (big5_none.bag, scripts/data/big_5gb.py), bytes touched, against rosbags' AnyReader.
Each figure is the best of --runs (2) runs; the values are checked equal between the two.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import bagscope

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ["linear_acceleration.x", "linear_acceleration.y", "angular_velocity.z"]


def best(f, runs=2):
    out, t = None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = f()
        dt = time.perf_counter() - t0
        t = dt if t is None else min(t, dt)
    return t, out


def ours_series(bag, topic):
    with bagscope.open(bag) as r:
        return r.series([f"{topic}.{f}" for f in FIELDS])


def peer_series(bag, topic):
    from rosbags.dataframe import get_dataframe
    from rosbags.highlevel import AnyReader
    with AnyReader([Path(bag)]) as r:
        return get_dataframe(r, topic, FIELDS)


def ours_iterate(bag, topics):
    n = 0
    with bagscope.open(bag) as r:
        for m in r.messages(topics=topics):
            m.msg
            n += 1
    return n


def peer_iterate(bag, topics, dropin=False):
    """rosbags' AnyReader, or (dropin) bagscope's drop-in for it, with the same script."""
    if dropin:
        from bagscope.rosbags import AnyReader
    else:
        from rosbags.highlevel import AnyReader
    n = 0
    with AnyReader([Path(bag)]) as r:
        conns = [c for c in r.connections if topics is None or c.topic in topics]
        for c, _, raw in r.messages(connections=conns):
            r.deserialize(raw, c.msgtype)
            n += 1
    return n


def ours_arrow(path, topic):
    with bagscope.open(path) as r:
        return r.to_arrow(topic)


def peer_arrow(path, topic):
    import mcap_codec
    import pyarrow as pa
    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        def read_bytes(off, n):
            f.seek(off)
            return f.read(n)
        cur = mcap_codec.open_mcap_file(read_bytes, size,
                                        timestamp=mcap_codec.TimestampSource('message_log_time'),
                                        channel=mcap_codec.TopicName(topic))
        return pa.Table.from_batches(list(cur))


def same_arrow(ours, peer):
    """The two tables hold the same rows: times, and every leaf column both have."""
    import pyarrow as pa

    def flat(t):
        while any(pa.types.is_struct(f.type) for f in t.schema):
            t = t.flatten()
        return t
    a, b = flat(ours), flat(peer)
    assert a.num_rows == b.num_rows
    assert a.column('time_ns').to_pylist() == b.column(1).cast(pa.int64()).to_pylist()
    common = [n for n in a.schema.names[1:] if n in b.schema.names]
    assert len(common) >= 3, common
    for n in common:
        assert a.column(n).to_pylist() == b.column(n).to_pylist(), n
    return len(common)


ITERATE = """
import sys, resource
from pathlib import Path
n = 0
if sys.argv[1] == 'bagscope':
    import bagscope
    with bagscope.open(sys.argv[2]) as r:
        for m in r.messages(raw=True):
            n += len(m.data) > 0
else:
    from rosbags.highlevel import AnyReader
    with AnyReader([Path(sys.argv[2])]) as r:
        for c, t, raw in r.messages():
            n += len(raw) > 0
# VmHWM: this process's own peak (ru_maxrss would carry the parent's over fork and exec).
hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]
print(n, hwm)
"""


def peak_iterate(who, path):
    """Messages and peak resident memory (bytes) of a fresh process iterating `path`."""
    out = subprocess.run([sys.executable, '-c', ITERATE, who, str(path)], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1]) * 1024


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    bags = Path(args[0]) if args else ROOT / 'bench-bags'
    small, heavy = bags / 'many_small_lz4.bag', bags / 'medium_bz2.bag'
    big = bags / 'big_none.bag'
    rows = []
    try:
        import rosbags.dataframe  # noqa: F401
        have_df = True
    except ImportError:
        have_df = False
        print('rosbags-dataframe is not installed: the series rows are left out')
    for name, bag, topic in [('many_small_lz4', small, '/imu'), ('big_none', big, '/imu'),
                             ('medium_bz2', heavy, '/imu')]:
        if not bag.exists():
            print(f'{bag}: missing')
            continue
        if have_df:
            t1, s = best(lambda: ours_series(bag, topic))
            t2, df = best(lambda: peer_series(bag, topic))
            for k, f in enumerate(FIELDS):
                assert np.array_equal(s[f'{topic}.{f}'], df[f].to_numpy()), f
            assert np.array_equal(s['time_ns'], df.index.to_numpy().astype(np.int64))
            rows.append((f'{name}: series of 3 {topic} fields ({len(s["time_ns"])} rows)', t1, t2,
                         'rosbags-dataframe get_dataframe'))
        t1, n1 = best(lambda: ours_iterate(bag, [topic]))
        t2, n2 = best(lambda: peer_iterate(bag, [topic]))
        t3, n3 = best(lambda: peer_iterate(bag, [topic], dropin=True))
        assert n1 == n2 == n3
        rows.append((f'{name}: iterate and decode {topic} ({n1} messages)', t1, t2,
                     'rosbags AnyReader + deserialize'))
        rows.append((f'{name}: the same through bagscope.rosbags.AnyReader', t3, t2,
                     'rosbags AnyReader + deserialize'))
    whole = [('big_none', big), ('medium_bz2', heavy)]
    if '--full' in sys.argv:
        # 5 M messages: about 6 minutes for rosbags.
        whole.insert(0, ('many_small_lz4', small))
    for name, bag in whole:
        if not bag.exists():
            continue
        t1, n1 = best(lambda: ours_iterate(bag, None), runs=1)
        t2, n2 = best(lambda: peer_iterate(bag, None), runs=1)
        t3, n3 = best(lambda: peer_iterate(bag, None, dropin=True), runs=1)
        assert n1 == n2 == n3
        rows.append((f'{name}: iterate and decode every message ({n1})', t1, t2,
                     'rosbags AnyReader + deserialize'))
        rows.append((f'{name}: the same through bagscope.rosbags.AnyReader', t3, t2,
                     'rosbags AnyReader + deserialize'))
    zstd = bags / 'many_small_zstd.mcap'
    if zstd.exists():
        for topic in ['/imu', '/sensors/point_04']:
            t1, a = best(lambda: ours_arrow(zstd, topic))
            t2, b = best(lambda: peer_arrow(zstd, topic))
            same_arrow(a, b)
            rows.append((f'many_small_zstd.mcap: {topic} to Arrow ({a.num_rows} rows)', t1, t2,
                         'roboto-mcap-codec open_mcap_file'))
    for what, ours, peer, who in rows:
        print(f'{what:62} bagscope {ours:8.3f} s   {who} {peer:8.3f} s   -> {peer / ours:6.1f}x')
    big5 = bags / 'big5_none.bag'
    if big5.exists():
        size = big5.stat().st_size
        # Each twice, the second timed (the file in the page cache as far as it fits).
        (n1, m1), t1 = peak_iterate('bagscope', big5), 0.0
        (n2, m2), t2 = peak_iterate('rosbags', big5), 0.0
        t1, (n1, m1b) = best(lambda: peak_iterate('bagscope', big5), runs=1)
        t2, (n2, m2b) = best(lambda: peak_iterate('rosbags', big5), runs=1)
        m1, m2 = max(m1, m1b), max(m2, m2b)
        assert n1 == n2
        print(f'big5_none.bag ({size / 1e9:.2f} GB, {n1} messages): iterate every message, peak memory '
              f'bagscope {m1 / 2**20:.0f} MiB ({t1:.1f} s), rosbags AnyReader {m2 / 2**20:.0f} MiB ({t2:.1f} s)')


if __name__ == '__main__':
    main()
