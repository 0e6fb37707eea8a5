#!/usr/bin/env python3
"""Every message through the rosbags drop-in, against rosbags, side by side in one run.

Usage: python3 scripts/bench/dropin.py BAG [--runs N] [--old PYTHON] [--peer-only-once]

Each row is a fresh process (so no row warms another's caches but the page cache, which the
first, untimed pass fills) running the same loop:

    with AnyReader([bag]) as r:
        for c, t, raw in r.messages():
            r.deserialize(raw, c.msgtype)

- **rosbags**: rosbags' own `rosbags.highlevel.AnyReader` (this interpreter's install);
- **drop-in**: `bagscope.rosbags.AnyReader` of this interpreter's bagscope;
- **drop-in (old)**: the same through `--old PYTHON`, another interpreter (a virtual
  environment with an older bagscope wheel installed), for old against new in one run;
- **package**: bagscope's own `Recording.messages()` and `.msg` (its `Msg` objects), the floor
  the drop-in's dataclasses stand on.

Each figure is the best of --runs (default 2), the rows' runs taken in turn (round robin); the
message counts are checked equal.
"""
import argparse
import subprocess
import sys

LOOP = {
    "rosbags": """
from rosbags.highlevel import AnyReader
with AnyReader([Path(bag)]) as r:
    for c, _, raw in r.messages():
        r.deserialize(raw, c.msgtype)
        n += 1
""",
    "drop-in": """
from bagscope.rosbags import AnyReader
with AnyReader([Path(bag)]) as r:
    for c, _, raw in r.messages():
        r.deserialize(raw, c.msgtype)
        n += 1
""",
    "package": """
import bagscope
with bagscope.open(bag) as r:
    for m in r.messages():
        m.msg
        n += 1
""",
}


def run(python, kind, bag):
    body = "\n    ".join(LOOP[kind].strip().splitlines())
    code = f"""
import sys, time
from pathlib import Path
bag = sys.argv[1]
n = 0
t0 = time.perf_counter()
if True:
    {body}
print(time.perf_counter() - t0, n)
"""
    out = subprocess.run([python, "-c", code, bag], check=True, capture_output=True, text=True)
    t, n = out.stdout.split()
    return float(t), int(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bag")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--old", help="another Python whose bagscope is the old drop-in")
    ap.add_argument("--peer-runs", type=int, help="runs of rosbags (default --runs)")
    a = ap.parse_args()
    # The page cache filled once, untimed.
    run(sys.executable, "package", a.bag)
    rows = [("rosbags", sys.executable, "rosbags", a.peer_runs or a.runs)]
    if a.old:
        rows.append(("drop-in (old)", a.old, "drop-in", a.runs))
    rows.append(("drop-in", sys.executable, "drop-in", a.runs))
    rows.append(("package `Recording.messages()`", sys.executable, "package", a.runs))
    # Round robin: each row's runs spread over the whole benchmark rather than one after
    # another, so that a stretch of a slower machine (a shared host's neighbours) is spread
    # over every row instead of landing on one.
    times = {name: [] for name, _, _, _ in rows}
    counts = {}
    for k in range(max(runs for *_, runs in rows)):
        for name, python, kind, runs in rows:
            if k < runs:
                t, n = run(python, kind, a.bag)
                times[name].append(t)
                counts[name] = n
    got = []
    for name, _, _, _ in rows:
        ts = times[name]
        got.append((name, min(ts), counts[name]))
        print(f"{name}: best {min(ts):.3f} s of {', '.join(f'{t:.3f}' for t in ts)} ({counts[name]} messages)",
              flush=True)
    counts = {n for _, _, n in got}
    if len(counts) != 1:
        sys.exit(f"message counts differ: {got}")
    peer = got[0][1]
    print()
    print(f"| every message of {a.bag} ({got[0][2]:,}) | seconds | against rosbags |")
    print("|---|---:|---:|")
    for name, t, _ in got:
        print(f"| {name} | {t:.3f} | {peer / t:.1f}× |")


if __name__ == "__main__":
    main()
