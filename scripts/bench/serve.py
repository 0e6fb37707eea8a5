#!/usr/bin/env python3
"""`bagscope serve` against the Foxglove SDK's own WebSocket server (pip foxglove-sdk), side by
side in one run: the same recording served to the same client (Foxglove's client library,
npm @foxglove/ws-protocol over `ws`, tests/js/foxglove_client.js in its summary mode),
subscribed to every channel; throughput from the first message received to the last, in
messages/s and MB/s of message payload (best of RUNS).

    python3 scripts/bench/serve.py [RUNS]

bagscope serves at --speed 1e9 (as fast as it can); the SDK's server is fed by
tests/py/foxglove_serve_peer.py, which reads the whole recording into memory first (rosbags for
a ROS 1 bag) and then logs every message as fast as the SDK takes them, with a backlog that
holds them all. Recordings: 10 s of bench-bags/many_small_lz4.bag (small messages on 50
topics, cut with `bagscope export`) and 120 s of the demo recording (camera images, clouds: 75 MB of messages).
Needs target/release/bagscope, Node.js and npm (the client's packages are installed into a
temporary folder), the pip foxglove-sdk and rosbags.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BAGSCOPE = ROOT / "target" / "release" / "bagscope"
PEER = ROOT / "tests" / "py" / "foxglove_serve_peer.py"
CLIENT = ROOT / "tests" / "js" / "foxglove_client.js"


def client(d, url):
    out = subprocess.run(
        ["node", str(d / "foxglove_client.js"), url, "foxglove.sdk.v1",
         json.dumps({"summary": True, "idleMs": 3000, "maxMs": 600000})],
        check=True, capture_output=True, text=True).stdout
    s = next(json.loads(l) for l in out.splitlines() if '"summary"' in l)
    secs = (s["lastWall"] - s["firstWall"]) / 1000
    return s["messages"], s["bytes"], secs


def ours(d, rec):
    p = subprocess.Popen([str(BAGSCOPE), "serve", "--port", "0", "--speed", "1e9", str(rec)],
                         stdout=subprocess.PIPE, text=True)
    try:
        url = next(w for w in p.stdout.readline().split() if w.startswith("ws://"))
        return client(d, url)
    finally:
        p.kill()
        p.wait()


def sdk(d, rec):
    p = subprocess.Popen([sys.executable, str(PEER), str(rec)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(p.stdout.readline())
        return client(d, f"ws://127.0.0.1:{port}")
    finally:
        p.kill()
        p.wait()


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(d),
                        "@foxglove/ws-protocol@0.8.0", "ws@8.18.3"], check=True)
        shutil.copy(CLIENT, d / "foxglove_client.js")
        small = d / "small.bag"
        src = ROOT / "bench-bags" / "many_small_lz4.bag"
        subprocess.run([str(BAGSCOPE), "export", str(src), "-o", str(small), "--start", "+40",
                        "--end", "+50"], check=True, capture_output=True)
        demo = d / "demo.bag"
        subprocess.run([str(BAGSCOPE), "demo", str(demo), "--seconds", "120"], check=True,
                       capture_output=True)
        rows = []
        for name, rec in [("many small messages (10 s of many_small_lz4)", small),
                          ("demo recording, 120 s (images, clouds)", demo)]:
            best = {}
            for who, f in [("bagscope serve", ours), ("foxglove-sdk server", sdk)]:
                results = [f(d, rec) for _ in range(runs)]
                n, b, secs = min(results, key=lambda r: r[2])
                best[who] = (n, b, secs)
                print(f"{name}: {who}: {n} messages, {b / 1e6:.1f} MB in {secs:.2f} s: "
                      f"{n / secs:,.0f} msg/s, {b / 1e6 / secs:.1f} MB/s", flush=True)
            (n1, _, s1), (n2, _, s2) = best["bagscope serve"], best["foxglove-sdk server"]
            assert n1 == n2, f"{name}: {n1} messages against {n2}"
            rows.append((name, best, s2 / s1))
        print(json.dumps([{"recording": r[0], "ratio": round(r[2], 2),
                           **{k: {"messages": v[0], "bytes": v[1], "seconds": round(v[2], 3)}
                              for k, v in r[1].items()}} for r in rows], indent=1))


if __name__ == "__main__":
    main()
