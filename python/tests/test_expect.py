"""`bagscope check --expect` held against its peers:

1. A recording made here with rosbags' writer: `/pose` (PointStamped, 50 Hz, its stamps 20 ms
   before its receive times) silent from +8 s to +11 s, `/battery` (Float32, 1 Hz) falling below
   0.1 at +19 s. A rules file that must fail on the gap and the battery fails with those time
   ranges and values; the JUnit XML it writes parses with `junitparser` and says the same.
2. Every recording of the corpora that rosbags reads: the count, mean rate and longest gap of
   every topic as bagscope measures them equal those computed with pandas from rosbags' receive
   times (counts exactly, the rest within 1e-9).
3. The fleet: `bagscope catalog CORPUS_DIR --expect` (the single-process table) and
   `bagscope.dask.expectations` on a Dask local cluster give the same table.
"""
import json
import math
import subprocess

import numpy as np
import pandas as pd
from rosbags.highlevel import AnyReader
from rosbags.rosbag1 import Writer
from rosbags.typesys import Stores, get_typestore

T0 = 1_700_000_000 * 10**9
S = 10**9


def fail(msg):
    raise AssertionError(msg)


def gap_fixture(path):
    ts = get_typestore(Stores.ROS1_NOETIC)
    Point = ts.types["geometry_msgs/msg/PointStamped"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    P = ts.types["geometry_msgs/msg/Point"]
    F = ts.types["std_msgs/msg/Float32"]
    with Writer(path) as w:
        pose = w.add_connection("/pose", Point.__msgtype__, typestore=ts)
        bat = w.add_connection("/battery", F.__msgtype__, typestore=ts)
        out = []
        for i in range(20 * 50 + 1):
            t = T0 + i * 20_000_000
            if T0 + 8 * S < t < T0 + 11 * S:
                continue
            st = t - 20_000_000
            m = Point(Header(seq=i, stamp=Time(sec=st // S, nanosec=st % S), frame_id="map"),
                      P(x=float(i), y=0.0, z=0.0))
            out.append((t, pose, ts.serialize_ros1(m, Point.__msgtype__)))
        for k in range(21):
            # 1.0 at +0 s, 0.05 lower each second: 0.1 (as float32, just above) at +18, below from +19.
            m = F(data=np.float32(1.0 - 0.05 * k))
            out.append((T0 + k * S + 5_000_000, bat, ts.serialize_ros1(m, F.__msgtype__)))
        for t, c, data in sorted(out, key=lambda x: x[0]):
            w.write(c, t, data)


def test_a_known_gap_and_low_battery_fail_with_their_ranges(cli, tmp_path):
    BIN, WORK = str(cli), tmp_path
    bag = WORK / "gap.bag"
    gap_fixture(bag)
    rules = WORK / "gap_rules.yaml"
    rules.write_text(
        "topics:\n"
        "  /pose:\n"
        "    type: geometry_msgs/msg/PointStamped\n"
        "    rate: [40, 55]\n"
        "    rate_share: 0.99\n"
        "    max_gap: 1.0\n"
        "    stamp_lag: [0.015, 0.025]\n"
        "  /battery:\n"
        "    values:\n"
        "      - .data > 0.1\n"
        "  /camera:\n"
        "    required: false\n"
    )
    junit = WORK / "gap.xml"
    r = subprocess.run([BIN, "check", "--expect", str(rules), "--json", "--junit", str(junit),
                        str(bag)], capture_output=True, text=True)
    if r.returncode != 1:
        fail(f"exit {r.returncode}, not 1: {r.stderr}")
    rep = json.loads(r.stdout)[0]
    by = {(o["check"], o["topic"]): o for o in rep["outcomes"]}
    gap = by[("max_gap", "/pose")]
    # The messages at +8 s and +11 s are kept (the silence is the open interval between).
    if gap["status"] != "fail" or gap["start_ns"] != T0 + 8 * S or gap["end_ns"] != T0 + 11 * S:
        fail(f"the gap: {gap}")
    if abs(gap["measured"] - 3.0) > 1e-12:
        fail(f"the gap's length: {gap['measured']}")
    val = by[("value", "/battery")]
    first_low = T0 + 19 * S + 5_000_000
    if val["status"] != "fail" or val["start_ns"] != first_low or val["end_ns"] != T0 + 20 * S + 5_000_000:
        fail(f"the battery: {val}")
    if abs(val["measured"] - float(np.float32(1.0 - 0.05 * 20))) > 1e-9:
        fail(f"the battery's worst value: {val['measured']}")
    share = by[("rate_share", "/pose")]
    if abs(share["measured"] - 850 / 851) > 1e-12:
        fail(f"the share of periods within: {share}")
    for key in [("type", "/pose"), ("rate", "/pose"), ("rate_share", "/pose"), ("stamp_lag", "/pose")]:
        if by[key]["status"] != "pass":
            fail(f"{key}: {by[key]}")
    if by[("required", "/camera")]["status"] != "skip":
        fail(f"/camera: {by[('required', '/camera')]}")
    # The rate as pandas has it.
    with AnyReader([bag]) as rd:
        t = pd.Series([ts for c, ts, _ in rd.messages() if c.topic == "/pose"])
    rate = (len(t) - 1) / ((t.iloc[-1] - t.iloc[0]) / S)
    if abs(by[("rate", "/pose")]["measured"] - rate) > 1e-9 * rate:
        fail(f"rate {by[('rate', '/pose')]['measured']} vs {rate}")

    from junitparser import Failure, JUnitXml, Skipped

    xml = JUnitXml.fromfile(str(junit))
    cases = [c for suite in xml for c in suite]
    failures = {c.name: c for c in cases if any(isinstance(x, Failure) for x in c.result)}
    skipped = [c.name for c in cases if any(isinstance(x, Skipped) for x in c.result)]
    fails = {f"{o['check']} {o['topic']}" for o in rep["outcomes"] if o["status"] == "fail"}
    if set(failures) != fails or len(cases) != len(rep["outcomes"]):
        fail(f"JUnit failures {sorted(failures)} vs {sorted(fails)}")
    if skipped != ["required /camera"]:
        fail(f"JUnit skipped {skipped}")
    msg = failures["max_gap /pose"].result[0].message
    if "from +8.000 s to +11.000 s" not in msg:
        fail(f"the gap's JUnit message: {msg}")
    print(f"fixture: gap +8..+11 s and battery from +19 s failed; JUnit {len(cases)} cases, "
          f"{len(failures)} failures, {len(skipped)} skipped")


def yaml_key(topic):
    return json.dumps(topic)


def test_counts_rates_and_gaps_equal_pandas_over_rosbags(cli, tmp_path, bags_dir, bags2_dir):
    BIN, WORK = str(cli), tmp_path
    paths = sorted(p for p in bags_dir.rglob("*.bag"))
    paths += sorted(p for p in bags2_dir.rglob("*.mcap"))
    paths += sorted(p.parent for p in bags2_dir.rglob("metadata.yaml"))
    compared = topics = 0
    for p in paths:
        try:
            with AnyReader([p]) as rd:
                times = {}
                for c, t, _ in rd.messages():
                    times.setdefault(c.topic, []).append(t)
        except Exception:  # noqa: BLE001: a recording rosbags refuses is not compared
            continue
        if not times:
            continue
        rules = WORK / "corpus_rules.yaml"
        lines = ["topics:"]
        for name in times:
            lines += [f"  {yaml_key(name)}:", "    count: [0, null]", "    rate: [0, null]",
                      "    max_gap: 1e12"]
        rules.write_text("\n".join(lines) + "\n")
        r = subprocess.run([BIN, "check", "--expect", str(rules), "--json", str(p)],
                           capture_output=True, text=True)
        if r.returncode not in (0, 1):
            fail(f"{p}: exit {r.returncode}: {r.stderr}")
        rep = json.loads(r.stdout)[0]
        by = {(o["check"], o["topic"]): o for o in rep["outcomes"]}
        for name, ts in times.items():
            s = pd.Series(sorted(ts), dtype="int64")
            n = len(s)
            if by[("count", name)]["measured"] != n:
                fail(f"{p} {name}: count {by[('count', name)]['measured']} vs {n}")
            span = int(s.iloc[-1] - s.iloc[0])
            if n >= 2 and span > 0:
                rate = (n - 1) / (span / S)
                got = by[("rate", name)]["measured"]
                if not math.isclose(got, rate, rel_tol=1e-9):
                    fail(f"{p} {name}: rate {got} vs {rate}")
                gap = s.diff().max() / S
                got = by[("max_gap", name)]["measured"]
                if not math.isclose(got, gap, rel_tol=1e-9):
                    fail(f"{p} {name}: max_gap {got} vs {gap}")
            topics += 1
        compared += 1
    if compared < 40:
        fail(f"only {compared} recordings compared")
    print(f"corpus: {compared} recordings, {topics} topics: counts, rates and gaps equal pandas")


def test_a_fleet_on_dask_gives_the_single_process_table(cli, tmp_path, bags_dir):
    BIN, WORK, CORPUS = str(cli), tmp_path, bags_dir
    rules = WORK / "fleet_rules.yaml"
    rules.write_text(
        "topics:\n"
        "  /rosout:\n"
        "    required: false\n"
        "    rate: [0.5, 100]\n"
        "    max_gap: 5\n"
        "  /tf:\n"
        "    required: false\n"
        "    rate: [10, 1000]\n"
        "    max_gap: 0.5\n"
        "alignment:\n"
        "  - topics: [/tf, /rosout]\n"
        "    start: 1.0\n"
        "duration: [1, null]\n"
    )
    out = WORK / "catalog"
    r = subprocess.run([BIN, "catalog", str(CORPUS), "-o", str(out), "--expect", str(rules)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"catalog --expect: {r.stderr}")
    single = pd.read_parquet(out / "expectations.parquet")
    recordings = pd.read_parquet(out / "recordings.parquet")["path"].tolist()

    from dask.distributed import Client, LocalCluster

    import bagscope.dask

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1") as cluster, Client(cluster):
        fleet = bagscope.dask.expectations(recordings, rules).compute()
    key = ["recording", "line", "check", "topic"]
    a = single.sort_values(key, kind="stable").reset_index(drop=True)
    b = fleet.sort_values(key, kind="stable").reset_index(drop=True)
    b = b.astype(a.dtypes.to_dict())
    if list(a.columns) != list(b.columns):
        fail(f"columns {list(a.columns)} vs {list(b.columns)}")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    n_fail = (a["status"] == "fail").sum()
    print(f"fleet: {a['recording'].nunique()} recordings, {len(a)} rows ({n_fail} failed) "
          "equal on a Dask local cluster and in one process")

