#!/usr/bin/env python3
"""A 5 GB uncompressed ROS 1 bag for the memory row of scripts/bench/python.py: the mixed robot
recording of ../shared/tools/gen_bench_bags.py's big_none.bag (camera, IMU, TF, odometry, scan,
point cloud, rosout at their rates), 160 s of it instead of 48 s.

Usage: python3 scripts/data/big_5gb.py [--out DIR]   (default: bench-bags; writes big5_none.bag)
Deterministic (the shared generator's seed). Needs: pip install -r ../shared/tools/requirements.txt
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
import gen_bench_bags as g  # noqa: E402

DURATION_S = 160.0  # 31.2 MB/s of payload -> ~5 GB


def main():
    out = Path(sys.argv[2]) if sys.argv[1:2] == ["--out"] else ROOT / "bench-bags"
    out.mkdir(parents=True, exist_ok=True)
    path = out / "big5_none.bag"
    if path.exists():
        path.unlink()
    t0 = time.perf_counter()
    info = g.write_mixed(path, g.BIG_RATES, DURATION_S, None, seed=1)
    print(f"{path}: {info['messages']} messages, {path.stat().st_size / 1e9:.2f} GB, "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
