"""Diagnostic statuses per name and level, read by rosbags (its own deserializer, types from
the bag's definitions): what `bagscope info --freq --json` reports under "diagnostics".

python3 diagnostics_rosbags.py BAG  prints {"messages": N, "counts": {name: {level: n}}}
"""
import json
import sys
from collections import defaultdict
from pathlib import Path

from rosbags.highlevel import AnyReader

LEVELS = {0: "ok", 1: "warn", 2: "error", 3: "stale"}

with AnyReader([Path(sys.argv[1])]) as reader:
    conns = [c for c in reader.connections if c.msgtype.endswith("DiagnosticArray")]
    counts = defaultdict(lambda: defaultdict(int))
    n = 0
    for conn, _, raw in reader.messages(connections=conns):
        msg = reader.deserialize(raw, conn.msgtype)
        n += 1
        for s in msg.status:
            level = s.level if isinstance(s.level, int) else int.from_bytes(s.level, "little")
            counts[s.name][LEVELS.get(level, "other")] += 1
print(json.dumps({"messages": n, "counts": counts}))
