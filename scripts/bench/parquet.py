#!/usr/bin/env python3
"""Decoded Parquet of a whole recording: `bagscope export --format parquet` against the same
written by hand with rosbags and pyarrow (deserialize every message, its fields as columns, one
file per topic, zstd, row groups of 65,536 rows), whole processes in turn, the same run.

Usage: python3 scripts/bench/parquet.py [BAG] [--bin target/release/bagscope]
(default BAG: bench-bags/many_small_lz4.bag, 5,000,000 messages on 50 topics). Checks that the
two outputs hold the same number of rows per topic and the same values of a few columns.
"""
import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PEER = r'''
import dataclasses, sys
from pathlib import Path
import numpy as np
import pyarrow as pa, pyarrow.parquet as pq
from rosbags.highlevel import AnyReader

def flat(msg, prefix, out):
    for f in dataclasses.fields(msg):
        if f.name == "__msgtype__":
            continue
        v = getattr(msg, f.name)
        if dataclasses.is_dataclass(v):
            flat(v, prefix + f.name + ".", out)
        elif isinstance(v, np.ndarray):
            out[prefix + f.name] = v.tolist()
        else:
            out[prefix + f.name] = v

out = Path(sys.argv[2]); out.mkdir()
rows, writers = {}, {}
def flush(topic):
    t = pa.Table.from_pylist(rows[topic])
    if topic not in writers:
        writers[topic] = pq.ParquetWriter(out / (topic.strip("/").replace("/", ".") + ".parquet"), t.schema, compression="zstd")
    writers[topic].write_table(t)
    rows[topic] = []
with AnyReader([Path(sys.argv[1])]) as r:
    for c, t, raw in r.messages():
        d = {"time_ns": t}
        flat(r.deserialize(raw, c.msgtype), "", d)
        rows.setdefault(c.topic, []).append(d)
        if len(rows[c.topic]) >= 65536:
            flush(c.topic)
for topic in list(rows):
    if rows[topic]:
        flush(topic)
for w in writers.values():
    w.close()
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bag", nargs="?", default=str(ROOT / "bench-bags" / "many_small_lz4.bag"))
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "bagscope"))
    a = ap.parse_args()
    work = Path("/tmp/bench_parquet")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    t0 = time.perf_counter()
    subprocess.run([a.bin, "export", a.bag, "--format", "parquet", "-o", str(work / "ours")], check=True,
                   capture_output=True)
    ours = time.perf_counter() - t0
    print(f"bagscope export --format parquet: {ours:.2f} s", flush=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", PEER, a.bag, str(work / "peer")], check=True)
    peer = time.perf_counter() - t0
    print(f"rosbags + pyarrow by hand:        {peer:.2f} s   -> {peer / ours:.1f}x", flush=True)
    import pyarrow.parquet as pq
    for f in sorted((work / "peer").glob("*.parquet")):
        p = pq.read_table(f)
        o = pq.read_table(work / "ours" / f.name).flatten()
        while any(str(t).startswith("struct") for t in o.schema.types):
            o = o.flatten()
        assert p.num_rows == o.num_rows, f.name
        assert p.column("time_ns").to_pylist() == o.column("time_ns").to_pylist(), f.name
        for name in p.schema.names[1:4]:
            if name in o.schema.names and not name.startswith("header.stamp"):
                assert p.column(name).to_pylist() == o.column(name).to_pylist(), (f.name, name)
    print("same rows and values in both")


if __name__ == "__main__":
    main()
