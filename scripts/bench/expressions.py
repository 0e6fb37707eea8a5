#!/usr/bin/env python3
"""Expressions: a derived series against the plain one, and against rosbags-dataframe plus
pandas computing the same, side by side in one run (whole processes, interleaved, medians).

    python3 scripts/bench/expressions.py [BAG] [ROUNDS]

BAG defaults to bench-bags/many_small_lz4.bag (5 M messages; its /imu is 100,000 at 1 kHz),
made by `python3 ../shared/tools/gen_bench_bags.py bench-bags`. Needs target/release/bagscope
(`cargo build --release`) and rosbags-dataframe, pandas (pip). Each case writes the series to
a file; the peer's is computed as Lichtblick (derivative) and pandas (rolling "0.5s") do, and the
two outputs are compared at the end.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELD = "angular_velocity.z"
TOPIC = "/imu"

PEER = r"""
import sys, time
import numpy as np, pandas as pd
from pathlib import Path
import rosbags.dataframe as dataframe, rosbags.highlevel as highlevel
bag, topic, field, out = sys.argv[1:5]
with highlevel.AnyReader([Path(bag)]) as r:
    df = dataframe.get_dataframe(r, topic, [field])
t = df.index.to_numpy().astype(np.int64)
y = df[field].to_numpy().astype(np.float64)
d = np.diff(y) / (np.diff(t) / 1e9)
s = pd.Series(d, index=pd.to_datetime(t[1:], unit="ns")).rolling("0.5s").mean()
np.save(out, np.stack([t[1:].astype(np.float64), s.to_numpy()]))
"""


def run(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode() if p.stderr else ""
    if status != 0:
        sys.exit(f"exit status {status}: {' '.join(cmd)}\n{err}")
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main():
    bag = sys.argv[1] if len(sys.argv) > 1 else "bench-bags/many_small_lz4.bag"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    exe = "target/release/bagscope"
    tmp = Path(tempfile.mkdtemp(prefix="bagscope-expr-bench-"))
    plain = f"{TOPIC}.{FIELD}"
    derived = f"{plain}.@derivative.@movavg(0.5s)"
    cases = {
        "bagscope csv, plain series": [exe, "csv", bag, plain, "-o", str(tmp / "plain.csv")],
        "bagscope csv, .@derivative.@movavg(0.5s)": [exe, "csv", bag, derived, "-o", str(tmp / "derived.csv")],
        "rosbags-dataframe + pandas, the same": [sys.executable, "-c", PEER, bag, TOPIC, FIELD, str(tmp / "peer.npy")],
    }
    res = {k: [] for k in cases}
    for _ in range(rounds):
        for k, c in cases.items():
            res[k].append(run(c))
    base = statistics.median(r[0] for r in res["bagscope csv, plain series"])
    print(f"{bag}, {rounds} rounds interleaved, medians")
    print(f"{'case':45} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'× plain':>8}")
    for k, r in res.items():
        w = statistics.median(x[0] for x in r)
        c = statistics.median(x[1] for x in r)
        m = statistics.median(x[2] for x in r) / 1024
        print(f"{k:45} {w:8.3f} {c:8.3f} {m:9.0f} {w / base:8.2f}")
    # The same numbers: bagscope's derived column against the peer's.
    import numpy as np

    peer = np.load(tmp / "peer.npy")
    rows = [line.split(",") for line in (tmp / "derived.csv").read_text().splitlines()[1:]]
    got = np.array([[float(a), float(b)] for a, b in rows]).T
    assert got.shape == peer.shape, (got.shape, peer.shape)
    assert np.array_equal(got[0], peer[0])
    err = np.nanmax(np.abs(got[1] - peer[1])) / np.nanmax(np.abs(peer[1]))
    print(f"derived series: {got.shape[1]} samples, equal to the peer's within {err:.1e} (relative)")


if __name__ == "__main__":
    main()
