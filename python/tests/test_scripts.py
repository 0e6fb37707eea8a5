"""Scripts from Python: `Recording.derive` (a Python function per sample and vectorised over
numpy columns), `Recording.lua` (bagscope's Lua, PlotJuggler's snippets), and
`Recording.with_scripts` (message scripts' virtual topics), held against the same computation
in numpy over `Recording.series` and against `bagscope csv --lua`."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bagscope

TILT = Path(__file__).resolve().parents[2] / ".." / "shared" / "bags" / "plotjuggler" / "tilt_laser.bag"


def nearest(t_main, t_src, v_src):
    """PlotJuggler's alignment in numpy: the first sample at or after, or the one before when
    strictly nearer; the last past the end."""
    xs, x = t_src / 1e9, t_main / 1e9
    i = np.searchsorted(xs, x, side="left")
    i = np.minimum(i, len(xs) - 1)
    prev = np.maximum(i - 1, 0)
    take_prev = (i > 0) & (np.abs(xs[prev] - x) < np.abs(xs[i] - x)) & (xs[np.minimum(i, len(xs) - 1)] >= x)
    return v_src[np.where(take_prev, prev, i)]


@pytest.fixture(scope="module")
def rec():
    with bagscope.open(TILT) as r:
        yield r


def test_derive_per_sample_and_vectorised_equal_numpy(rec):
    a = rec.series(["/imu_data.orientation.w"])
    b = rec.series(["/gravity_vector.vector.x"])
    ta, va = a["time_ns"], a["/imu_data.orientation.w"]
    ta, va = ta[~np.isnan(va)], va[~np.isnan(va)]
    tb, vb = b["time_ns"], b["/gravity_vector.vector.x"]
    tb, vb = tb[~np.isnan(vb)], vb[~np.isnan(vb)]
    want = va * 2 + nearest(ta, tb, vb)
    per = rec.derive(lambda t, v, g: v * 2 + g, "/imu_data.orientation.w", "/gravity_vector.vector.x")
    vec = rec.derive(lambda t, v, g: v * 2 + g, "/imu_data.orientation.w", "/gravity_vector.vector.x", vectorized=True)
    for got in (per, vec):
        assert np.array_equal(got["time_ns"], ta)
        assert np.array_equal(got["value"], want)
    # None gives no point; (time, value) moves it.
    some = rec.derive(lambda t, v: None if v < 0.8 else (t + 1.0, v), "/imu_data.orientation.w")
    keep = va >= 0.8
    assert np.array_equal(some["value"], va[keep])
    # (Seconds since the epoch as a double: 2**-22 s, 238 ns, apart around 2012.)
    assert np.all(np.abs(some["time_ns"] - (ta[keep] + 1_000_000_000)) <= 240)
    with pytest.raises(ValueError, match="sample 0"):
        rec.derive(lambda t, v: "text", "/imu_data.orientation.w")


def test_lua_equals_bagscope_csv(rec, tmp_path):
    snippet = "kmh(/imu_data.orientation.w, /gravity_vector.vector.x) = return value * 3.6 + v1"
    got = rec.lua(snippet)["kmh"]
    out = subprocess.run(
        [sys.executable, "-m", "bagscope", "csv", str(TILT), "--lua", snippet],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[1:]
    want_t = np.array([int(l.split(",")[0]) for l in out])
    want_v = np.array([float(l.split(",")[1]) for l in out])
    assert np.array_equal(got["time_ns"], want_t)
    assert np.array_equal(got["value"], want_v)
    # A bad source: said before any work.
    with pytest.raises(bagscope.Error, match="nope"):
        rec.lua("x(/nope.a) = return value")


def test_with_scripts_has_the_virtual_topic(rec, tmp_path):
    s = tmp_path / "double.lua"
    s.write_text(
        "-- topic: /double\n-- type: std_msgs/msg/Float64\n-- input: /imu_data\n"
        "function message(topic, msg, time) return { data = msg.orientation.w * 2 } end\n"
    )
    with rec.with_scripts([s]) as v:
        names = [t.name for t in v.topics]
        assert "/double" in names
        d = v.series(["/double.data"])["/double.data"]
        w = rec.series(["/imu_data.orientation.w"])["/imu_data.orientation.w"]
        assert np.array_equal(d[~np.isnan(d)], w[~np.isnan(w)] * 2)


def test_with_virtual_makes_a_topic_from_a_python_function(rec):
    def double(topic, msg, t):
        if msg.orientation.w < 0.8:
            return None
        return {"data": msg.orientation.w * 2}

    with rec.with_virtual("/double_py", "std_msgs/msg/Float64", ["/imu_data"], double) as v:
        d = v.series(["/double_py.data"])["/double_py.data"]
        w = rec.series(["/imu_data.orientation.w"])["/imu_data.orientation.w"]
        w = w[~np.isnan(w)]
        assert np.array_equal(d[~np.isnan(d)], w[w >= 0.8] * 2)
    # A dict that does not fit the type: the field named, the function's error kept as the cause.
    with pytest.raises(bagscope.Error, match="dta"):
        rec.with_virtual("/bad", "std_msgs/msg/Float64", ["/imu_data"], lambda topic, msg, t: {"dta": 1.0})
    with pytest.raises(bagscope.Error, match=r"/bad, at 1326899528\.468056009 \(message 0\): ZeroDivisionError") as e:
        rec.with_virtual("/bad", "std_msgs/msg/Float64", ["/imu_data"], lambda topic, msg, t: 1 / 0)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
