#!/usr/bin/env python3
"""A message script's virtual topic, cold (its overlay not in the cache), until it is first
shown: `bagscope echo REC --script S -t TOPIC -n 1` (the command line) and the app's first
screen (`ui_frame --bench --script-only REC`: the loader makes the virtual topic and indexes the
recording; the time until the virtual topic is on the screen). Builds are run in turn, in one
run, each several times with the page cache warm, then with it dropped (needs root: it writes
/proc/sys/vm/drop_caches).

    python3 scripts/bench/virtual_first_screen.py BAG --build old:BAGSCOPE:UI_FRAME --build new:...

BAGSCOPE is a release `bagscope`; UI_FRAME the bench executable `cargo bench --no-run --bench
ui_frame` names (target/release/deps/ui_frame-*).
"""
import argparse
import os
import re
import subprocess
import tempfile
import time

SCRIPT = """-- topic: /point_marker
-- type: visualization_msgs/msg/MarkerArray
-- input: /sensors/point_00
function message(topic, msg, time)
  local p = msg.point or msg.pose.pose.position
  return { markers = { { header = msg.header, ns = 'p', id = 1, type = 2,
    pose = { position = p, orientation = { w = 1 } },
    scale = { x = 0.2, y = 0.2, z = 0.2 }, color = { r = 1, a = 1 } } } }
end
"""


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def cli(bagscope, bag, script):
    env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp())
    t = time.perf_counter()
    subprocess.run([bagscope, "echo", bag, "--script", script, "-t", "/point_marker", "-n", "1"],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def app(ui_frame, bag):
    env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp())
    out = subprocess.run([ui_frame, "--bench", "--repeat", "1", "--script-only", bag], env=env,
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"on the screen after ([0-9.]+) s", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bag")
    ap.add_argument("--build", action="append", required=True, help="NAME:BAGSCOPE:UI_FRAME")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", type=int, default=2)
    a = ap.parse_args()
    builds = [b.split(":") for b in a.build]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(SCRIPT)
    res = {(n, w, c): [] for n, _, _ in builds for w in ("cli", "app") for c in ("warm", "cold")}
    for cache, runs in (("warm", a.runs), ("cold", a.cold)):
        for _ in range(runs):
            for name, bagscope, ui_frame in builds:
                if cache == "cold":
                    drop_caches()
                res[(name, "cli", cache)].append(cli(bagscope, a.bag, f.name))
                if cache == "cold":
                    drop_caches()
                res[(name, "app", cache)].append(app(ui_frame, a.bag))
    print("| build | what | page cache | runs (s) | worst (s) |")
    print("|---|---|---|---|---:|")
    for (name, what, cache), v in res.items():
        if v:
            runs = ", ".join(f"{x:.2f}" for x in v)
            print(f"| {name} | {'`echo -n 1`' if what == 'cli' else 'app, first screen'} | {cache} | {runs} | {max(v):.2f} |")


if __name__ == "__main__":
    main()
