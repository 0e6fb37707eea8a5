"""The fixes of a ROS 1 bag's NavSatFix topic as ROS 1's own Python library reads them
(Debian's python3-rosbag; run with Debian's python3). An unindexed bag is copied into DIR and
the copy reindexed first, as `rosbag reindex` does (the source is never written).

    /usr/bin/python3 rosbag1_fixes.py BAG TOPIC DIR

Prints one JSON list of [time_ns, status, latitude, longitude, altitude].
"""
import json
import shutil
import sys
from pathlib import Path

import rosbag

path, topic, tmp = sys.argv[1], sys.argv[2], Path(sys.argv[3])
try:
    bag = rosbag.Bag(path)
except rosbag.ROSBagUnindexedException:
    copy = tmp / "reindexed.bag"
    shutil.copyfile(path, copy)
    with rosbag.Bag(str(copy), "a", allow_unindexed=True) as b:
        for _ in b.reindex():
            pass
    bag = rosbag.Bag(str(copy))
with bag:
    rows = [
        [t.to_nsec(), m.status.status, m.latitude, m.longitude, m.altitude]
        for _, m, t in bag.read_messages(topics=[topic])
    ]
print(json.dumps(rows))
