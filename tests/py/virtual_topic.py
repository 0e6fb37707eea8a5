"""rosbags reads a virtual topic bagscope exported: every MarkerArray the message script made
from /imu_data holds, in order, the orientation rosbags decodes from the recording itself.

usage: python3 virtual_topic.py RECORDING EXPORTED_ROSBAG2_DIR
"""
import sys
from pathlib import Path

from rosbags.highlevel import AnyReader


def read(path, topic):
    with AnyReader([Path(path)]) as r:
        conns = [c for c in r.connections if c.topic == topic]
        return [(t, r.deserialize(raw, c.msgtype)) for c, t, raw in r.messages(connections=conns)]


source = read(sys.argv[1], "/imu_data")
made = read(sys.argv[2], "/imu_marker")
assert len(source) == len(made) > 100, (len(source), len(made))
for k, ((t0, imu), (t1, arr)) in enumerate(zip(source, made)):
    assert t0 == t1, (k, t0, t1)
    m = arr.markers[0]
    assert m.id == k + 1 and m.type == 2 and m.header.frame_id == imu.header.frame_id, (k, m)
    q, o = imu.orientation, m.pose.orientation
    assert (q.x, q.y, q.z, q.w) == (o.x, o.y, o.z, o.w), (k, q, o)
    assert (m.scale.x, m.color.r, m.color.a) == (1.0, 1.0, 1.0)
print(f"{len(made)} markers equal")
