"""The metadata records of an MCAP file as the pip `mcap` package reads them, one JSON line
each: {"name": ..., "metadata": {...}}."""
import json
import sys

from mcap.reader import make_reader

with open(sys.argv[1], "rb") as f:
    for m in make_reader(f).iter_metadata():
        print(json.dumps({"name": m.name, "metadata": dict(m.metadata)}, ensure_ascii=False))
