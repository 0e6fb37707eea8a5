"""The package's API on a recording made by bagscope's own writer (the demo) and checked
against the command line of the same checkout."""

import json
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import bagscope


@pytest.fixture(scope="module")
def demo(tmp_path_factory, cli):
    p = tmp_path_factory.mktemp("demo") / "demo.bag"
    subprocess.run([str(cli), "demo", str(p), "--seconds", "20"], check=True, capture_output=True)
    return p


def test_topics_times_and_info(demo):
    with bagscope.open(demo) as rec:
        topics = {t.name: t for t in rec.topics}
        assert topics["/odom"].msgtype == "nav_msgs/Odometry"
        assert topics["/odom"].count == 1000
        assert topics["/odom"].encoding == "ros1"
        # The median rate: 50 Hz, the demo's receive times jittered by up to 0.3 ms.
        assert abs(topics["/odom"].rate - 50.0) < 0.05
        assert rec.duration == pytest.approx((rec.end_ns - rec.start_ns) / 1e9)
        info = rec.info()
        assert info["messages"] == sum(t.count for t in rec.topics)
        assert {t["name"] for t in info["topics"]} == set(topics)
    with pytest.raises(bagscope.Error, match="closed"):
        rec.topics


def test_messages_decode_as_echo_prints_them(demo, cli):
    out = subprocess.run([str(cli), "echo", "--json", "-t", "/odom", "-t", "/scan", "-n", "300", str(demo)],
                         check=True, capture_output=True, text=True).stdout
    echoed = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert len(echoed) == 300
    with bagscope.open(demo) as rec:
        got = list(zip(rec.messages(topics=["/odom", "/scan"]), echoed))
    for m, e in got:
        assert (m.topic, m.time_ns) == (e["topic"], e["time_ns"])
        d = m.msg.to_dict()
        if m.topic == "/odom":
            assert d["pose"]["pose"]["position"]["x"] == e["message"]["pose"]["pose"]["position"]["x"]
            assert m.msg.header.stamp.sec == e["message"]["header"]["stamp"]["secs"]
            assert isinstance(m.msg.pose.covariance, np.ndarray)
            assert m.msg.pose.covariance.dtype == np.float64
            assert m.msg.pose.covariance.tolist() == e["message"]["pose"]["covariance"]
        else:
            assert m.msg.ranges.dtype == np.float32
            # echo prints each float32 as its shortest decimal: the same float32 back.
            assert np.array_equal(m.msg.ranges, np.array(e["message"]["ranges"], dtype=np.float32))
    with pytest.raises(AttributeError, match="no field"):
        got[0][0].msg.nope


def test_series_equal_csv(demo, cli):
    paths = ["/odom.pose.pose.position.x", "/imu/data.linear_acceleration.z"]
    out = subprocess.run([str(cli), "csv", str(demo), *paths, "-o", "-"],
                         check=True, capture_output=True, text=True).stdout
    rows = [r.split(",") for r in out.splitlines()[1:]]
    with bagscope.open(demo) as rec:
        s = rec.series(paths)
    assert s["time_ns"].dtype == np.int64
    assert s["time_ns"].tolist() == [int(r[0]) for r in rows]
    for k, p in enumerate(paths):
        want = [float(r[k + 1]) if r[k + 1] else float("nan") for r in rows]
        assert np.array_equal(s[p], np.array(want), equal_nan=True)


def test_a_missing_topic_and_a_bad_path_say_so(demo):
    with bagscope.open(demo) as rec:
        with pytest.raises(bagscope.NotFoundError, match="/nope"):
            rec.messages(topics=["/nope"])
        with pytest.raises(bagscope.Error):
            rec.series(["/odom.pose.pose.position["])


def _reading_threads():
    """How many threads of this process are message iterators' reading threads."""
    names = []
    for comm in Path("/proc/self/task").glob("*/comm"):
        try:
            names.append(comm.read_text().strip())
        except OSError:  # a thread that ended while the directory was listed
            pass
    return names.count("bagscope-read")


def _until(cond, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)
    return cond()


def test_messages_are_read_on_a_thread_that_ends_with_the_iteration(demo):
    with bagscope.open(demo) as rec:
        whole = [(m.topic, m.time_ns, m.conn) for m in rec.messages(raw=True)]
        assert len(whole) == rec.info()["messages"]
        assert _until(lambda: _reading_threads() == 0), "a finished iteration left its thread"
        it = rec.messages(raw=True)
        assert _reading_threads() == 0, "an iterator nothing was asked of reads"
        first = [(m.topic, m.time_ns, m.conn) for m in (next(it) for _ in range(10))]
        assert first == whole[:10]
        # The demo's messages (5,986) are more than two of the thread's batches (2,048 at most):
        # with the first handed out and two waiting, the thread waits to say the end.
        assert _reading_threads() == 1
        # Dropped half-way: its thread stops (at its next hand-over), holding nothing.
        del it
        assert _until(lambda: _reading_threads() == 0), "a dropped iterator left its thread"


def test_two_threads_share_one_iteration(demo, in_two_threads):
    """Each message goes to one of them, none twice or lost, and neither waits forever on the
    other (one waits for the reading thread with the GIL let go while the other asks)."""
    with bagscope.open(demo) as rec:
        whole = [(m.topic, m.time_ns, m.conn) for m in rec.messages(raw=True)]
        it = rec.messages(raw=True)
        got = [[], []]

        def take(k):
            for m in it:
                got[k].append((m.topic, m.time_ns, m.conn))

        in_two_threads(take)
        assert sorted(got[0] + got[1]) == sorted(whole)
        place = {m: i for i, m in enumerate(whole)}
        assert all(g == sorted(g, key=place.__getitem__) for g in got)


def _stalled(work, seconds=1.0, gap=200e-6):
    """The share of `seconds` that a pure-Python loop in a second thread spends stopped while
    this one calls `work` over and over: the sum of the pauses longer than `gap` between two of
    its turns. A thread that holds the GIL stops it (CPython hands the GIL over every 5 ms);
    a machine's cores, shared or slowed, make it slower but do not stop it, so this measures
    the GIL and not the machine (a loop's speed alone against beside measured both: 86.5 % on
    CI's machine on 2026-11-29, where reads hold no GIL)."""
    stalled = 0.0
    done = threading.Event()

    def spin():
        nonlocal stalled
        clock = time.perf_counter
        last = clock()
        while not done.is_set():
            now = clock()
            if now - last > gap:
                stalled += now - last
            last = now

    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < seconds:
        work()
        calls += 1
    dt = time.perf_counter() - t0
    done.set()
    t.join()
    assert calls >= 1
    return stalled / dt


@pytest.mark.alone
def test_reads_release_the_gil(demo):
    """A pure-Python thread beside reads runs >= 95 % of the time: the GIL is released while
    the read decompresses, decodes and builds the series. Measured by the pauses of the loop
    (`_stalled`), the least of five runs (a machine's other load comes and goes). The read on
    one thread, so that on a machine of two cores the spinner has the other (scripts/bench/gil.py
    measures speed with reads of one thread and of every core). Run alone (`-m alone` in
    .ci/run), with nothing else on the machine's two cores."""
    paths = ["/imu/data.linear_acceleration.z", "/odom.pose.pose.position.x", "/scan.ranges[0]"]
    with bagscope.open(demo, threads=1) as rec:
        s = rec.series(paths)
        assert len(s["time_ns"]) > 2000
        stalled = min(_stalled(lambda: rec.series(paths)) for _ in range(5))
    # What a thread that holds the GIL leaves (the measure sees it): about half, or less.
    held = _stalled(lambda: sum(range(1_000_000)))
    print(f"stopped {stalled:.2%} of the time beside series(), {held:.1%} beside a pure-Python loop")
    assert held > 0.3, f"stopped {held:.1%} beside a pure-Python loop: the measure does not see the GIL"
    assert stalled <= 0.05, f"a Python thread was stopped {stalled:.2%} of the time beside series()"
    with pytest.raises(ValueError, match="threads: at least 1"):
        bagscope.open(demo, threads=0)
