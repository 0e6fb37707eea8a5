"""`Recording.series` bit-identical to rosbags-dataframe's `get_dataframe` (times and values) on
a ROS 1 bag, a rosbag2 SQLite and a rosbag2 MCAP recording."""

from pathlib import Path

import numpy as np
import pytest

import bagscope

# The peers (installed by .ci/run): a missing one fails the tests, it does not skip them.
import rosbags.dataframe as dataframe
import rosbags.highlevel as highlevel

CASES = [
    ("bags", "robot_localization/test3_b.bag", "/ardrone/imu",
     ["linear_acceleration.x", "angular_velocity.z", "orientation.w"], 25217),
    ("bags2", "rosbags-rs/test_bag_sqlite3", "/test/geometry_msgs/twist", ["linear.x", "angular.z"], 2),
    ("bags2", "rosbags-rs/test_bag_mcap", "/test/geometry_msgs/twist", ["linear.x", "angular.z"], 2),
]


@pytest.mark.parametrize("corpus,name,topic,fields,rows", CASES)
def test_series_equal_get_dataframe(corpus, name, topic, fields, rows, bags_dir, bags2_dir):
    path = (bags_dir if corpus == "bags" else bags2_dir) / name
    with highlevel.AnyReader([Path(path)]) as r:
        df = dataframe.get_dataframe(r, topic, fields)
    with bagscope.open(path) as rec:
        s = rec.series([f"{topic}.{f}" for f in fields])
    assert len(df) == rows
    assert np.array_equal(s["time_ns"], df.index.to_numpy().astype(np.int64))
    for f in fields:
        got, want = s[f"{topic}.{f}"], df[f].to_numpy()
        assert got.dtype == np.float64
        assert np.array_equal(got, want.astype(np.float64)), f
