#!/usr/bin/env python3
"""`bagscope catalog` of 1,000 recordings, cold (no catalog yet) and warm (nothing changed).

Usage: python3 scripts/bench/catalog.py [--bin target/release/bagscope] [--dir bench-bags/catalog1000]
Makes the recordings once (kept in --dir, gitignored with bench-bags/): 700 ROS 1 bags, 200
MCAP files and 90 rosbag2 SQLite directories, each 2 s of the demo robot (cameras, lidar, IMU,
TF, rosout), and 10 large sparse recordings (5 bags and 5 MCAP files of 10 GB apparent size,
2,000,000 messages each, camera pixels left as holes: `bagscope gen-sparse`). Prints the
times of each run and what the catalog holds (through DuckDB when it is installed).
"""
import argparse
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make(bin_, d):
    d.mkdir(parents=True, exist_ok=True)
    seed = d / "seed"
    seed.mkdir(exist_ok=True)
    bag, mcap, r2 = seed / "demo.bag", seed / "demo.mcap", seed / "demo_r2"
    if not bag.exists():
        subprocess.run([bin_, "demo", str(bag), "--seconds", "2"], check=True, capture_output=True)
        subprocess.run([bin_, "export", str(bag), "-o", str(mcap)], check=True, capture_output=True)
        subprocess.run([bin_, "export", str(bag), "--to-ros2", "-o", str(r2)], check=True, capture_output=True)
    runs = d / "runs"
    if runs.exists():
        return runs
    tmp = d / "runs.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    for k in range(7):
        (tmp / f"robot{k}").mkdir(parents=True)
    for k in range(700):
        shutil.copy(bag, tmp / f"robot{k % 7}" / f"run{k:04d}.bag")
    for k in range(200):
        shutil.copy(mcap, tmp / f"robot{k % 7}" / f"run{k:04d}.mcap")
    for k in range(90):
        shutil.copytree(r2, tmp / f"robot{k % 7}" / f"run{k:04d}_r2")
    (tmp / "big").mkdir()
    for k in range(5):
        for fmt in ["bag", "mcap"]:
            subprocess.run([bin_, "gen-sparse", str(tmp / "big" / f"big{k}.{fmt}"), "--format", fmt,
                            "--size", "10G", "--messages", "2000000"], check=True, capture_output=True)
    tmp.rename(runs)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "bagscope"))
    ap.add_argument("--dir", default=str(ROOT / "bench-bags" / "catalog1000"))
    a = ap.parse_args()
    d = Path(a.dir)
    runs = make(a.bin, d)
    out = d / "catalog"
    shutil.rmtree(out, ignore_errors=True)
    for what in ["cold", "warm"]:
        t0 = time.perf_counter()
        r = subprocess.run([a.bin, "catalog", str(runs), "-o", str(out)], check=True, capture_output=True, text=True)
        print(f"{what}: {time.perf_counter() - t0:.2f} s   {r.stderr.strip()}")
    try:
        import duckdb
        print(duckdb.sql(f"SELECT format, count(*) AS recordings, sum(messages) AS messages, "
                         f"sum(size) AS bytes FROM '{out}/recordings.parquet' GROUP BY ALL ORDER BY ALL"))
    except ImportError:
        pass


if __name__ == "__main__":
    main()
