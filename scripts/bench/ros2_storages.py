#!/usr/bin/env python3
"""Side-by-side benchmark of bagscope and rosbags on the ROS 2 storages, in one run.

Usage: python3 scripts/bench/ros2_storages.py [BAG_DIR]   (default: ./bench-bags, made by
       python3 scripts/data/bench_bags_ros2.py --out bench-bags)
For each recording (rosbag2 SQLite, rosbag2 MCAP, standalone zstd MCAP): bagscope's summary,
message tables, time-ordered iteration, parallel check and `csv` of one field, against rosbags'
open (Reader + topics), iterate and deserialize-one-field. Each figure is the best of 2 runs.
"""
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT / 'scripts' / 'bench' / 'peer_ros2_storages.py'


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def best_wall(cmd, runs=2):
    best = None
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def peer(op, path, runs=2):
    return min(run_json([sys.executable, str(PEER), op, str(path)])['seconds'] for _ in range(runs))


def main():
    bags = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / 'bench-bags'
    subprocess.run(['cargo', 'build', '--release', '--quiet'], cwd=ROOT, check=True)
    exe = ROOT / 'target' / 'release' / 'bagscope'
    for name in ['many_small_sqlite3', 'many_small_mcap', 'many_small_zstd.mcap']:
        path = bags / name
        if not path.exists():
            print(f'{path}: missing (run scripts/data/bench_bags_ros2.py)')
            continue
        ours = run_json([str(exe), 'bench', str(path), '--runs', '2'])
        csv = best_wall([str(exe), 'csv', str(path), '/imu.linear_acceleration.x', '-o', '/tmp/bench2.csv'])
        print(f'== {name}')
        s, t, it, ck, dz = ours['summary'], ours['tables'], ours['iterate'], ours['check'], ours['decompress']
        print(f"  summary                {s['seconds'] * 1e3:9.2f} ms")
        if name.endswith('.mcap'):
            print(f"  message tables         {t['seconds']:9.3f} s  ({t['bytes_per_message']:.0f} B/message)")
            print(f"  iterate (time order)   {it['seconds']:9.3f} s  ({it['decompressed_gb_per_s']:.2f} GB/s)")
            print(f"  check (all cores)      {ck['seconds']:9.3f} s  ({ck['decompressed_gb_per_s']:.2f} GB/s)"
                  f"   decompression alone {dz['seconds']:7.3f} s ({dz['decompressed_gb_per_s']:.2f} GB/s)")
            print(f"  csv one field (wall)   {csv:9.3f} s")
            sys.stdout.flush()
            continue
        p_info, p_iter, p_field = peer('info', path), peer('iterate', path, 1), peer('field', path, 1)
        print(f"  message tables         {t['seconds']:9.3f} s  ({t['bytes_per_message']:.0f} B/message)"
              f"   rosbags open {p_info:8.3f} s  -> {p_info / t['seconds']:6.1f}x")
        print(f"  iterate (time order)   {it['seconds']:9.3f} s"
              f"   rosbags iterate {p_iter:8.2f} s  -> {p_iter / it['seconds']:6.1f}x")
        print(f"  check (all cores)      {ck['seconds']:9.3f} s   -> {p_iter / ck['seconds']:6.1f}x rosbags iterate")
        print(f"  csv one field (wall)   {csv:9.3f} s   rosbags field {p_field:8.2f} s  -> {p_field / csv:6.1f}x")
        sys.stdout.flush()


if __name__ == '__main__':
    main()
