#!/usr/bin/env python3
"""Interleaved timing of whole processes: each command run in turn, N rounds; medians of wall
and CPU time (user + system, from wait4), peak RSS and minor page faults.

    python3 scripts/bench/interleave.py N -- CMD_A ';;' CMD_B [';;' CMD_C ...]

e.g. the 10 s window of the zstd MCAP against the mcap crate's reader (scripts/bench/native.py
builds it into target/native):

    BAGSCOPE_INDEX_DIR=off python3 scripts/bench/interleave.py 21 -- \\
        target/release/bagscope csv --start +40 --end +50 bench-bags/many_small_zstd.mcap \\
        /imu.linear_acceleration.x -o /tmp/a.csv ';;' \\
        target/native/mcap_read bench-bags/many_small_zstd.mcap /imu 40 50
"""
import os
import shlex
import statistics
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    n = int(sys.argv[1])
    cmds = [shlex.split(c) for c in " ".join(sys.argv[3:]).split(";;")]
    res = [[] for _ in cmds]
    for _ in range(n):
        for k, c in enumerate(cmds):
            t = time.perf_counter()
            p = subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            if status != 0:
                print(f"exit status {status}: {' '.join(c)}", file=sys.stderr)
                return 1
            res[k].append((time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, ru.ru_minflt))
    for k, c in enumerate(cmds):
        r = res[k]
        med = lambda i: statistics.median(x[i] for x in r)  # noqa: E731
        print(f"{med(0) * 1000:8.1f} ms wall {med(1) * 1000:8.1f} ms cpu  rss {med(2) / 1024:.0f} MB "
              f"faults {med(3):.0f}  min {min(x[0] for x in r) * 1000:.1f}  {' '.join(c)[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
