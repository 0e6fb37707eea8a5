"""rosbags reading a GPS topic's fixes as a user's script does (AnyReader, deserialize, the
no-fix ones left out): the peer of the map's track (benches/ui_frame/map.rs).

    python3 scripts/bench/track_rosbags.py RECORDING TOPIC

Prints the seconds it took and the fixes kept.
"""
import sys
import time
from pathlib import Path

from rosbags.highlevel import AnyReader

t = time.perf_counter()
kept = []
with AnyReader([Path(sys.argv[1])]) as r:
    conns = [c for c in r.connections if c.topic == sys.argv[2]]
    for conn, ts, raw in r.messages(connections=conns):
        m = r.deserialize(raw, conn.msgtype)
        if m.status.status >= 0:
            kept.append((ts, m.latitude, m.longitude, m.altitude))
print(time.perf_counter() - t, len(kept))
