"""`Recording.track`: a GPS topic's fixes as numpy columns, equal to the fixes rosbags
decodes (no-fix ones left out and counted), the same from latitude/longitude paths, and a
pandas frame away from a GeoDataFrame."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rosbags.highlevel import AnyReader

import bagscope


def rosbags_fixes(path, topic):
    rows = []
    with AnyReader([Path(path)]) as r:
        conns = [c for c in r.connections if c.topic == topic]
        for c, t, raw in r.messages(connections=conns):
            m = r.deserialize(raw, c.msgtype)
            rows.append((t, m.status.status, m.latitude, m.longitude, m.altitude))
    return sorted(rows)


@pytest.mark.parametrize(
    "name,topic",
    [
        ("misc/rviz_satellite_sample.bag", "/gps/fix"),
        ("robot_localization/test1.bag", "/fix"),
        ("plotjuggler/tilt_laser.bag", "/position_gps"),
    ],
)
def test_track_equals_rosbags_fixes(bags_dir, name, topic):
    want = [r for r in rosbags_fixes(bags_dir / name, topic) if r[1] >= 0]
    t = bagscope.open(bags_dir / name).track(topic)
    assert t["time_ns"].dtype == np.int64
    assert list(t["time_ns"]) == [r[0] for r in want]
    assert np.array_equal(t["latitude"], [r[2] for r in want])
    assert np.array_equal(t["longitude"], [r[3] for r in want])
    assert np.array_equal(t["altitude"], [r[4] for r in want])
    assert t["left_out"]["no_fix"] == 0
    df = pd.DataFrame({k: v for k, v in t.items() if k != "left_out"})
    assert len(df) == len(want) and {"latitude", "longitude"} <= set(df.columns)


def test_track_from_paths_and_errors(bags_dir):
    rec = bagscope.open(bags_dir / "plotjuggler/tilt_laser.bag")
    by_type = rec.track("/position_gps")
    by_paths = rec.track(lat="/position_gps.latitude", lon="/position_gps.longitude")
    assert np.array_equal(by_type["latitude"], by_paths["latitude"])
    assert np.all(by_paths["status"] == -128)
    with pytest.raises(bagscope.Error, match="not a fix type"):
        rec.track("/imu_data")
    with pytest.raises(ValueError):
        rec.track()
