"""How much of its speed a pure-Python thread keeps while another thread reads a recording
through the package: the GIL is released around decompression, decoding and series building.

    python3 scripts/bench/gil.py BAG PATH... [--seconds S] [--runs N]

A spinning loop (`ticks += 1`) is timed alone, then beside a thread that calls
`Recording.series(PATHS)` over and over (after one call to warm up), with the read's threads
set to 1 and to the default (the machine's cores): its ticks a second beside the read over its
ticks a second alone, each run measured against an alone run taken just before it; the median
and best of the runs. On a machine of C cores a read of C threads shares them with the spinner,
so what is left there is a matter of cores, not of the GIL; one read thread leaves a core free.
Beside them, a pure-Python loop in the other thread (it holds the GIL as it runs) shows what a
GIL holder leaves: about half.
"""
import argparse
import os
import statistics
import threading
import time

import bagscope


def kept(work, seconds):
    """The spinner's ticks a second beside `work` called over and over for `seconds` (None:
    alone, the other thread asleep all that time: no wake-up takes the GIL)."""
    ticks = 0
    done = threading.Event()

    def spin():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t = threading.Thread(target=spin)
    t.start()
    t0 = time.perf_counter()
    calls = 0
    if work is None:
        time.sleep(seconds)
    while work is not None and time.perf_counter() - t0 < seconds:
        work()
        calls += 1
    dt = time.perf_counter() - t0
    done.set()
    t.join()
    return ticks / dt, calls


def ratios(work, seconds, runs):
    """(median beside / median alone, fastest beside / fastest alone, calls a run)."""
    alone, beside, calls = [], [], []
    for _ in range(runs):
        alone.append(kept(None, seconds)[0])
        b, c = kept(work, seconds)
        beside.append(b)
        calls.append(c)
    m = statistics.median
    return m(beside) / m(alone), max(beside) / max(alone), m(calls)


def row(what, threads, r):
    print(f"| {what} | {threads} | {r[2]:.0f} | {r[0]:.1%} | {r[1]:.1%} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bag")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    print(f"{os.cpu_count()} cores; {a.bag}; series of {', '.join(a.paths)}")
    print("| the other thread runs | threads of the read | calls a run | kept (medians) | kept (fastest runs) |")
    print("|---|---|---|---|---|")
    for threads in (1, None):
        with bagscope.open(a.bag, threads=threads) as rec:
            rec.series(a.paths)
            r = ratios(lambda: rec.series(a.paths), a.seconds, a.runs)
        row("`series()`", threads or "default", r)
    row("a pure-Python loop (`sum(range(10**6))`)", "-", ratios(lambda: sum(range(1_000_000)), a.seconds, a.runs))


if __name__ == "__main__":
    main()
