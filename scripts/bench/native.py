#!/usr/bin/env python3
"""bagscope against the native readers, side by side in one run (issue 27): whole processes in
turn, after one unmeasured pair, PAIRS pairs (four times as many for a row whose pair takes
under a second), medians; ratio = bagscope time / peer time (below 1: bagscope is faster).

Peers (built by this script into target/native/, from scripts/bench/native_readers/):
  ros1_read     Debian's C++ rosbag_storage (ros_comm), rosbag::View        (apt: librosbag-storage-dev pluginlib-dev)
  mcap_read     foxglove's `mcap` crate 0.26, its indexed reader, log-time order (cargo)
  rosbag2_read  rosbag2's SQLite read query through libsqlite3               (apt: libsqlite3-dev)
Each reads every message (or one topic in a time window) in time order. Where the peer's API
lends a message's bytes (the mcap crate, SQLite), it looks at them as `bagscope bench --op
iterate` looks at what `Messages::next_ref` lends (length counted, every 4096th byte summed);
rosbag::View has no such form, so the C++ reader copies each message out.

    cargo build --release
    python3 ../shared/tools/gen_bench_bags.py --out bench-bags     # big_none.bag, medium_bz2.bag
    python3 scripts/data/bench_bags_ros2.py --out bench-bags            # many_small_* (MCAP, SQLite)
    python3 scripts/bench/native.py bench-bags [--pairs 5] [--only SUBSTRING]

Prints each row's command lines, then the table (seconds, peak resident MiB, ratio), on both
cores and on one (`taskset -c 0`).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "scripts" / "bench" / "native_readers"
OUT = ROOT / "target" / "native"
CLI = ROOT / "target" / "release" / "bagscope"


def build():
    OUT.mkdir(parents=True, exist_ok=True)
    inc = [f"-I{d}" for d in ("/usr/include/pluginlib", "/usr/include/class_loader",
                              "/usr/include/rcpputils", "/usr/include/rcutils",
                              "/usr/include/ament_index_cpp") if Path(d).is_dir()]
    subprocess.run(["g++", "-O2", "-std=c++17", *inc, str(NATIVE / "ros1_read.cpp"), "-o",
                    str(OUT / "ros1_read"), "-lrosbag_storage", "-lroscpp_serialization",
                    "-lrostime", "-lcpp_common", "-lconsole_bridge"], check=True)
    subprocess.run(["cc", "-O2", str(NATIVE / "rosbag2_read.c"), "-o", str(OUT / "rosbag2_read"),
                    "-lsqlite3"], check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "--manifest-path",
                    str(NATIVE / "mcap_read" / "Cargo.toml"), "--target-dir", str(OUT / "cargo")],
                   check=True)
    shutil.copy(OUT / "cargo" / "release" / "mcap_read", OUT / "mcap_read")


def run(cmd, one_core, scratch):
    """(seconds, peak resident MiB) of one whole process (its own rusage, by wait4)."""
    for p in scratch:
        if Path(p).is_dir():
            shutil.rmtree(p)
        elif Path(p).exists():
            os.unlink(p)
    pre = ["taskset", "-c", "0"] if one_core else []
    t = time.perf_counter()
    proc = subprocess.Popen([*pre, *map(str, cmd)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, BAGSCOPE_INDEX_DIR="off"))
    _, status, ru = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}: {err[-500:]}")
    return secs, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?", default="bench-bags")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    d = Path(a.dir).resolve()
    build()
    # What the builds (ours, just before, or the peers') left to write back is written now, not
    # while the first rows are timed: a full run started right after `cargo build --release`
    # timed the first row's two-core pairs at 0.243 s where they take 0.151 s.
    os.sync()
    time.sleep(2)
    tmp = Path(tempfile.mkdtemp(prefix="bench-native-"))
    out_bag = tmp / "window.bag"
    mz, mu = d / "many_small_zstd.mcap", d / "many_small_mcap" / "many_small_mcap.mcap"
    sq = d / "many_small_sqlite3"
    big, bz2 = d / "big_none.bag", d / "medium_bz2.bag"
    iterate = lambda f: [CLI, "bench", "--op", "iterate", "--runs", "1", f]  # noqa: E731
    rows = [
        # (label, bagscope command, peer command, files it writes)
        ("read all, MCAP zstd (5 M)", iterate(mz), [OUT / "mcap_read", mz], []),
        ("read all, MCAP uncompressed (5 M)", iterate(mu), [OUT / "mcap_read", mu], []),
        ("check, MCAP zstd (5 M)", [CLI, "check", mz], [OUT / "mcap_read", mz], []),
        ("check, MCAP uncompressed (5 M)", [CLI, "check", mu], [OUT / "mcap_read", mu], []),
        ("csv /imu 10 s, MCAP zstd", [CLI, "csv", "--start", "+40", "--end", "+50", mz, "/imu.linear_acceleration.x", "-o", tmp / "a.csv"],
         [OUT / "mcap_read", mz, "/imu", "40", "50"], [tmp / "a.csv"]),
        ("csv /imu 10 s, MCAP uncompressed", [CLI, "csv", "--start", "+40", "--end", "+50", mu, "/imu.linear_acceleration.x", "-o", tmp / "a.csv"],
         [OUT / "mcap_read", mu, "/imu", "40", "50"], [tmp / "a.csv"]),
        ("csv /imu 10 s, rosbag2 SQLite", [CLI, "csv", "--start", "+40", "--end", "+50", sq, "/imu.linear_acceleration.x", "-o", tmp / "a.csv"],
         [OUT / "rosbag2_read", sq / "many_small_sqlite3.db3", "/imu", "40", "50"], [tmp / "a.csv"]),
        ("read all, rosbag2 SQLite (5 M)", iterate(sq), [OUT / "rosbag2_read", sq / "many_small_sqlite3.db3"], []),
        ("export /imu 10 s, 1.5 GB ROS 1 none", [CLI, "export", big, "--topic", "/imu", "--start", "+20", "--end", "+30", "-o", out_bag],
         [OUT / "ros1_read", big, "/imu", "20", "30"], [out_bag]),
        ("read all, 1.5 GB ROS 1 none", iterate(big), [OUT / "ros1_read", big], []),
        ("read all, ROS 1 bz2 (300 MB)", iterate(bz2), [OUT / "ros1_read", bz2], []),
    ]
    rows = [r for r in rows if a.only in r[0]]
    for label, ours, peer, _ in rows:
        print(f"# {label}\n  bagscope: {' '.join(map(str, ours))}\n  peer:     {' '.join(map(str, peer))}")
    print(f"\n{'operation':<40} {'cores':>5} {'bagscope s':>10} {'MiB':>6} {'peer s':>8} {'MiB':>6} {'ratio':>6}")
    for one_core in (False, True):
        for label, ours, peer, scratch in rows:
            ts_o, ts_p, mem_o, mem_p = [], [], [], []
            # One pair unmeasured (the page cache, the binaries), then the pairs; a row whose
            # pair takes under a second gets four times as many (a few tens of milliseconds a
            # process vary by a third on this VM).
            run(ours, one_core, scratch)
            run(peer, one_core, scratch)
            n = a.pairs
            while len(ts_o) < n:
                t, m = run(ours, one_core, scratch)
                ts_o.append(t)
                mem_o.append(m)
                t, m = run(peer, one_core, scratch)
                ts_p.append(t)
                mem_p.append(m)
                if len(ts_o) == 1 and ts_o[0] + ts_p[0] < 1.0:
                    n = a.pairs * 4
            o, p = statistics.median(ts_o), statistics.median(ts_p)
            print(f"{label:<40} {1 if one_core else os.cpu_count():>5} {o:10.4f} {max(mem_o):6.0f} "
                  f"{p:8.4f} {max(mem_p):6.0f} {o / max(p, 1e-3):6.3f}", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
