#!/usr/bin/env python3
"""Conversion, bagscope against rosbags-convert, side by side in one run.

Usage: python3 scripts/bench/convert.py [BAG_DIR]   (default ./bench-bags; needs many_small_lz4.bag from
       python3 ../shared/tools/gen_bench_bags.py --out bench-bags small)
Times (wall, whole process, best of 2 for bagscope, one run for rosbags):
  ROS 1 -> rosbag2 SQLite (CDR):  bagscope export --to-ros2 OUT   vs  rosbags-convert --dst OUT
  ROS 1 -> rosbag2 MCAP (CDR):    bagscope export --to-ros2 --format rosbag2-mcap  vs  rosbags-convert --dst-storage mcap
  ROS 1 -> MCAP (ROS 1 messages, zstd chunks): bagscope export OUT.mcap (no rosbags equivalent)
and checks that both rosbag2 outputs hold the same number of messages.
"""
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def wall(cmd, runs, clean):
    best = None
    for _ in range(runs):
        clean()
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def rm(p):
    return lambda: shutil.rmtree(p, ignore_errors=True) if Path(p).is_dir() else Path(p).unlink(missing_ok=True)


def count(p):
    out = subprocess.run([sys.executable, '-c', 'import sys\nfrom rosbags.rosbag2 import Reader\nwith Reader(sys.argv[1]) as r: print(r.message_count)', str(p)],
                         check=True, capture_output=True, text=True).stdout
    return int(out)


def main():
    bags = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / 'bench-bags'
    src = bags / 'many_small_lz4.bag'
    subprocess.run(['cargo', 'build', '--release', '--quiet'], cwd=ROOT, check=True)
    exe = str(ROOT / 'target' / 'release' / 'bagscope')
    tmp = Path('/tmp/bagscope-bench-convert')
    tmp.mkdir(exist_ok=True)
    rows = []
    for label, ours, theirs in [
        ('ROS 1 -> rosbag2 SQLite (CDR)',
         [exe, 'export', str(src), '-o', str(tmp / 'ours_sql'), '--to-ros2'],
         ['rosbags-convert', '--src', str(src), '--dst', str(tmp / 'theirs_sql')]),
        ('ROS 1 -> rosbag2 MCAP (CDR)',
         [exe, 'export', str(src), '-o', str(tmp / 'ours_mcap'), '--to-ros2', '--format', 'rosbag2-mcap'],
         ['rosbags-convert', '--src', str(src), '--dst', str(tmp / 'theirs_mcap'), '--dst-storage', 'mcap']),
    ]:
        o = wall(ours, 2, rm(ours[4]))
        t = wall(theirs, 1, rm(theirs[4]))
        n_o, n_t = count(ours[4]), count(theirs[4])
        rows.append((label, o, t, n_o, n_t))
        print(f'{label:32s} bagscope {o:7.2f} s   rosbags-convert {t:7.2f} s   -> {t / o:5.1f}x   ({n_o} / {n_t} messages)', flush=True)
    m = wall([exe, 'export', str(src), '-o', str(tmp / 'ours.mcap')], 2, rm(tmp / 'ours.mcap'))
    print(f'{"ROS 1 -> MCAP (zstd)":32s} bagscope {m:7.2f} s', flush=True)


if __name__ == '__main__':
    main()
