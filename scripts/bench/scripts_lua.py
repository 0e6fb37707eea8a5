#!/usr/bin/env python3
"""A series script over 5 M samples (every PointStamped `.point.x`, Float64 `.data` and the
IMU's `.linear_acceleration.x` of many_small_lz4.bag, held in memory): bagscope's script
(compiled when numbers-only, as this one is; and in its vendored Lua 5.4, through mlua) against
Debian's lua5.4 running the same snippet over the same values already in
memory, and against the same computation as a bagscope expression modifier (`.@derivative`),
in one run. The snippet is PlotJuggler's backward-difference derivative.

usage: scripts/bench/scripts_lua.py [BAG] [--runs N]   (release build: cargo build --release)
"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bag", nargs="?", default="/tmp/benchbags/many_small_lz4.bag")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    exe = ROOT / "target" / "release" / "bagscope"
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "values.csv"
        out = subprocess.run([str(exe), "bench", a.bag, "--op", f"script:{csv}", "--runs", str(a.runs)],
                             check=True, capture_output=True, text=True).stdout
        b = json.loads(out)["script"]
        lua = subprocess.run(["lua5.4", str(ROOT / "scripts/bench/lua_loop.lua"), str(csv), str(a.runs)],
                             check=True, capture_output=True, text=True).stdout.split()
        lua_n, lua_s = int(lua[0]), float(lua[1])
    assert lua_n == b["samples"], (lua_n, b["samples"])
    print(f"samples: {b['samples']:,}")
    assert b["compiled_equals_lua"], "the compiled run differs from Lua's"
    print(f"bagscope script       {b['script_seconds']:.3f} s  ({b['samples'] / b['script_seconds'] / 1e6:.1f} M samples/s, "
          f"{'compiled' if b['script_compiled'] else 'in Lua'})")
    print(f"  in Lua (mlua)       {b['script_lua_seconds']:.3f} s  (the same snippet in the vendored Lua 5.4, no hook)")
    print(f"  with the count hook {b['script_hooked_seconds']:.3f} s  (in Lua, the budget's hook kept)")
    print(f"Debian lua5.4 loop    {lua_s:.3f} s  ({lua_n / lua_s / 1e6:.1f} M samples/s)")
    print(f"bagscope expression   {b['expression_seconds']:.3f} s  (.@derivative)")
    print(f"script / lua5.4: {b['script_seconds'] / lua_s:.2f}x (with the hook {b['script_hooked_seconds'] / lua_s:.2f}x)   "
          f"script / expression: {b['script_seconds'] / b['expression_seconds']:.1f}x   "
          f"in Lua / lua5.4: {b['script_lua_seconds'] / lua_s:.2f}x")


if __name__ == "__main__":
    main()
