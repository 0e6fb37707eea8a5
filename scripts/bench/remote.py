#!/usr/bin/env python3
"""Recordings over HTTP with added latency: what opening an indexed 1 GB MCAP (and ROS 1 bag)
costs from a loopback server that sleeps before every answer (python/tests/range_server.py),
against the same on the local file.

    cargo build --release
    python3 ../shared/tools/gen_bench_bags.py --out bench-bags      # big_none.bag (1.5 GB)
    python3 scripts/bench/remote.py bench-bags [--latency-ms 50] [--runs 5]

Makes `bench-bags/big_1g.mcap` (the first ~32 s of big_none.bag as an indexed MCAP, lz4) once.
Prints, per operation, the median wall time of whole `bagscope` processes, the requests the
server answered and the bytes it sent: `info` (the index only), `csv` of one topic in a 5 s
window (the chunks of that window only), and `bagscope.open()` from Python.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
import range_server  # noqa: E402

CLI = ROOT / "target" / "release" / "bagscope"


def timed(cmd, env):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, env=env)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}: {r.stderr.decode()}")
    return dt, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--latency-ms", type=float, default=50.0)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    d = Path(a.dir)
    src = d / "big_none.bag"
    mcap = d / "big_1g.mcap"
    if not mcap.exists():
        subprocess.run([CLI, "export", src, "--format", "mcap", "--compression", "lz4",
                        "--end", "+32", "-o", mcap], check=True)
    env = dict(os.environ, BAGSCOPE_INDEX_DIR="off")
    srv, state, url = range_server.start(d, a.latency_ms / 1000)
    print(f"server: {url}, {a.latency_ms:.0f} ms before every answer; medians of {a.runs} runs")
    print(f"{'operation':<40} {'local s':>8} {'http s':>8} {'requests':>9} {'MB sent':>8} {'file MB':>8}")
    for name in [mcap.name, src.name]:
        size = (d / name).stat().st_size
        ops = [
            ("info", ["info"]),
            ("csv /imu 5 s window", ["csv", "--start", "+20", "--end", "+25", "/imu.linear_acceleration.x"]),
        ]
        for label, args in ops:
            loc, rem = [], []
            reqs = sent = 0
            for _ in range(a.runs):
                loc.append(timed([CLI, args[0], d / name, *args[1:]], env)[0])
                state.reset()
                before = state.bytes_sent
                rem.append(timed([CLI, args[0], f"{url}/{name}", *args[1:]], env)[0])
                reqs, sent = state.count(), state.bytes_sent - before
            print(f"{name + ' ' + label:<40} {statistics.median(loc):8.3f} {statistics.median(rem):8.3f} "
                  f"{reqs:9d} {sent / 1e6:8.1f} {size / 1e6:8.0f}")
    # The Python package: open and list the topics.
    code = ("import bagscope,sys,time; t=time.perf_counter(); r=bagscope.open(sys.argv[1]); "
            "n=len(r.topics); print(time.perf_counter()-t)")
    for name in [mcap.name, src.name]:
        ts = []
        for _ in range(a.runs):
            state.reset()
            out = subprocess.run([sys.executable, "-c", code, f"{url}/{name}"], capture_output=True,
                                 text=True, env=env, check=True).stdout
            ts.append(float(out))
        print(f"{name + ' bagscope.open() + topics':<40} {'':>8} {statistics.median(ts):8.3f} {state.count():9d}")
    srv.shutdown()


if __name__ == "__main__":
    main()
