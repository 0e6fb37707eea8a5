"""Expressions held against peers computed here from the same recordings: series read by
rosbags-dataframe, then numpy (Lichtblick's backward-difference derivative), scipy
(`cumulative_trapezoid`, `Rotation.as_euler("xyz")`) and pandas (`rolling("0.5s")`,
`merge_asof`)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bagscope

# The peers (installed by .ci/run): a missing one fails the tests, it does not skip them.
import rosbags.dataframe as dataframe
import rosbags.highlevel as highlevel
from scipy.integrate import cumulative_trapezoid
from scipy.spatial.transform import Rotation

IMU = ("robot_localization/test2.bag", "/imu/data")


def peer(path, topic, fields):
    """Times (int64 ns) and one float64 array per field, read by rosbags-dataframe."""
    with highlevel.AnyReader([Path(path)]) as r:
        df = dataframe.get_dataframe(r, topic, fields)
    t = df.index.to_numpy().astype(np.int64)
    return t, {f: df[f].to_numpy().astype(np.float64) for f in fields}


def close(got, want, rel=1e-9):
    """Equal within `rel` of the series' scale, NaN where the other is NaN."""
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    scale = max(np.max(np.abs(want[ok]), initial=0.0), 1e-300)
    err = np.max(np.abs(got[ok] - want[ok]), initial=0.0)
    assert err <= rel * scale, f"max error {err} against scale {scale}"


def test_derivative_integral_and_moving_average(bags_dir):
    path = bags_dir / IMU[0]
    field = "angular_velocity.z"
    t, v = peer(path, IMU[1], [field])
    y = v[field]
    p = f"{IMU[1]}.{field}"
    with bagscope.open(path) as rec:
        s = rec.series([f"{p}.@derivative", f"{p}.@integral", f"{p}.@movavg(0.5s)", f"{p}.@movavg(10)"])
    assert np.array_equal(s["time_ns"], t)
    dt = np.diff(t) / 1e9
    # The derivative as Lichtblick computes it: backward differences, none at the first sample.
    deriv = np.concatenate([[np.nan], np.diff(y) / dt])
    close(s[f"{p}.@derivative"], deriv)
    close(s[f"{p}.@integral"], cumulative_trapezoid(y, (t - t[0]) / 1e9, initial=0))
    series = pd.Series(y, index=pd.to_datetime(t, unit="ns"))
    close(s[f"{p}.@movavg(0.5s)"], series.rolling("0.5s").mean().to_numpy())
    close(s[f"{p}.@movavg(10)"], series.rolling(10).mean().to_numpy())
    # Chained: the moving average of the derivative, against pandas over numpy's differences.
    with bagscope.open(path) as rec:
        chained = rec.series([f"{p}.@derivative.@movavg(0.5s)"])
    d = pd.Series(deriv[1:], index=pd.to_datetime(t[1:], unit="ns"))
    close(chained[f"{p}.@derivative.@movavg(0.5s)"], d.rolling("0.5s").mean().to_numpy())


def orientation_topics(root):
    """(recording, topic, orientation path) of every Imu and Odometry topic of a corpus."""
    out = []
    for f in sorted(root.rglob("*")):
        if not (f.suffix in (".bag", ".mcap", ".db3") or f.name == "metadata.yaml"):
            continue
        try:
            with highlevel.AnyReader([f.parent if f.name == "metadata.yaml" else f]) as r:
                conns = list(r.connections)
        except Exception:
            continue
        for c in conns:
            kind = c.msgtype.replace("/msg/", "/")
            if kind == "sensor_msgs/Imu":
                out.append((f, c.topic, "orientation"))
            elif kind == "nav_msgs/Odometry":
                out.append((f, c.topic, "pose.pose.orientation"))
    return out


def test_roll_pitch_yaw_equal_scipy_on_every_imu_and_odometry_topic(bags_dir, bags2_dir):
    cases = orientation_topics(bags_dir) + orientation_topics(bags2_dir)
    assert len(cases) >= 15, cases
    compared = 0
    for path, topic, o in cases:
        src = path.parent if path.name == "metadata.yaml" else path
        fields = [f"{o}.{c}" for c in "xyzw"]
        t, q = peer(src, topic, fields)
        quat = np.stack([q[f] for f in fields], axis=1)
        norm = np.linalg.norm(quat, axis=1)
        with bagscope.open(src) as rec:
            s = rec.series([f"{topic}.{o}.{a}" for a in ("roll", "pitch", "yaw")])
        if len(t) == 0:
            continue
        assert np.array_equal(s["time_ns"], t), (path, topic)
        # A zero quaternion (an IMU without orientation) has no angles: NaN here, an error in
        # scipy.
        ok = norm > 0
        assert np.all(np.isnan(s[f"{topic}.{o}.roll"][~ok]))
        if not ok.any():
            continue
        want = Rotation.from_quat(quat[ok]).as_euler("xyz")
        for k, a in enumerate(("roll", "pitch", "yaw")):
            got = s[f"{topic}.{o}.{a}"][ok]
            diff = np.angle(np.exp(1j * (got - want[:, k])))
            # Away from gimbal lock (|pitch| < 89.9°) the angles are one; scipy's own
            # convention picks other equivalent angles there.
            away = np.abs(want[:, 1]) < np.radians(89.9)
            assert np.max(np.abs(diff[away]), initial=0.0) < 1e-9, (path, topic, a)
        compared += int(ok.sum())
    assert compared > 100_000, compared


def test_a_formula_over_two_recordings_with_an_offset_equals_merge_asof(bags_dir):
    a_path = bags_dir / "robot_localization/test3_a.bag"
    b_path = bags_dir / "robot_localization/test3_b.bag"
    field = "linear_acceleration.x"
    ta, va = peer(a_path, "/ardrone/imu", [field])
    tb, vb = peer(b_path, "/ardrone/imu", [field])
    # B shifted to start with A (and a little after, so samples interleave).
    offset = int(ta[0] - tb[0]) + 1_234_567
    with bagscope.open([a_path, b_path], offsets_ns=[0, offset]) as rec:
        s = rec.series(
            [f"d=/test3_a/ardrone/imu.{field} - /test3_b/ardrone/imu.{field}"],
        )
    a = pd.DataFrame({"t": ta, "a": va[field]})
    b = pd.DataFrame({"t": tb + offset, "b": vb[field]})
    union = pd.DataFrame({"t": np.union1d(a.t, b.t)})
    m = pd.merge_asof(union, a, on="t", direction="backward")
    m = pd.merge_asof(m, b, on="t", direction="backward")
    assert np.array_equal(s["time_ns"], m.t.to_numpy())
    close(s["d"], (m.a - m.b).to_numpy(), rel=0)


@pytest.mark.parametrize(
    "bad",
    ["/imu/data.orientation.@movavg(fast)", "/imu/data.nope", "hypot(/imu/data.orientation.x", "/imu/data.orientation"],
)
def test_bad_expressions_raise_with_the_place(bags_dir, bad):
    with bagscope.open(bags_dir / IMU[0]) as rec:
        with pytest.raises(Exception) as e:
            rec.series([bad])
    assert "column" in str(e.value)
