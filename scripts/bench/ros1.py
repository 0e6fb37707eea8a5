#!/usr/bin/env python3
"""Side-by-side benchmark of bagscope and the peer library rosbags, in one run.

Usage: python3 scripts/bench/ros1.py [BAG_DIR]   (default: ./bench-bags, made by
       python3 ../shared/tools/gen_bench_bags.py --out bench-bags)
Builds bagscope in release mode, then for each benchmark bag times bagscope's summary, message
tables, time-ordered iteration and parallel check, and rosbags' info and iterate on the same bag.
Prints one table; each figure is the best of --runs runs.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT.parent / 'shared' / 'tools' / 'peer_bench.py'


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    bags = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / 'bench-bags'
    subprocess.run(['cargo', 'build', '--release', '--quiet'], cwd=ROOT, check=True)
    exe = ROOT / 'target' / 'release' / 'bagscope'
    for name in ['many_small_lz4', 'medium_bz2', 'big_none']:
        bag = bags / f'{name}.bag'
        if not bag.exists():
            print(f'{bag}: missing (run gen_bench_bags.py)')
            continue
        ours = run_json([str(exe), 'bench', str(bag), '--runs', '2'])
        peer_info = run_json([sys.executable, str(PEER), 'info', str(bag)])['seconds']
        peer_iter = run_json([sys.executable, str(PEER), 'iterate', str(bag)])['seconds']
        t = ours['tables']
        print(f'== {name}')
        print(f"  summary                {ours['summary']['seconds'] * 1e3:8.2f} ms")
        print(f"  message tables         {t['seconds']:8.3f} s  ({t['bytes_per_message']:.0f} B/message)"
              f"   rosbags info {peer_info:7.2f} s  -> {peer_info / t['seconds']:6.1f}x")
        it = ours['iterate']
        print(f"  iterate (time order)   {it['seconds']:8.3f} s  ({it['decompressed_gb_per_s']:.2f} GB/s)"
              f"   rosbags iterate {peer_iter:7.2f} s  -> {peer_iter / it['seconds']:6.1f}x")
        ck = ours['check']
        print(f"  check (all cores)      {ck['seconds']:8.3f} s  ({ck['decompressed_gb_per_s']:.2f} GB/s)"
              f"   -> {peer_iter / ck['seconds']:6.1f}x rosbags iterate")
        sys.stdout.flush()


if __name__ == '__main__':
    main()
