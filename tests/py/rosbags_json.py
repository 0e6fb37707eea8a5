"""Dump every message of a bag as JSON lines the way `bagscope echo --json` writes them, using the
peer reader rosbags with types built from the definitions stored in the bag."""
import base64
import dataclasses
import json
import math
import sys

import numpy as np
from rosbags.rosbag1 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def conv(v):
    if isinstance(v, np.ndarray):
        if v.dtype == np.uint8:
            return base64.b64encode(v.tobytes()).decode()
        return [conv(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [conv(x) for x in v]
    if isinstance(v, (np.floating, float)):
        v = float(v)
        if math.isnan(v):
            return 'NaN'
        if math.isinf(v):
            return 'Infinity' if v > 0 else '-Infinity'
        return v
    if isinstance(v, (np.integer,)):
        return int(v)
    if hasattr(v, '__msgtype__'):
        if v.__msgtype__ in ('builtin_interfaces/msg/Time', 'builtin_interfaces/msg/Duration'):
            return {'secs': v.sec, 'nsecs': v.nanosec}
        return {f.name: conv(getattr(v, f.name)) for f in dataclasses.fields(v) if f.name != '__msgtype__' and not f.name.isupper()}  # constants are fields there
    return v


store = get_typestore(Stores.EMPTY)
with Reader(sys.argv[1]) as r:
    for c in r.connections:
        try:
            store.register(get_types_from_msg(c.msgdef.data, c.msgtype))
        except Exception as e:  # noqa: BLE001 - reported per connection
            print(f'# {c.topic}: {e}', file=sys.stderr)
    for conn, t, raw in r.messages():
        msg = store.deserialize_ros1(raw, conn.msgtype)
        print(json.dumps({'time_ns': t, 'topic': conn.topic, 'message': conv(msg)}))
