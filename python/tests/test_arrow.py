"""`Recording.to_arrow`: typed, nested Arrow tables read back by DuckDB row for row equal to what
`bagscope echo --json` prints, for ROS 1, CDR, protobuf and JSON channels; `to_pandas` as
rosbags-dataframe lays a topic out; `arrow_stream` for engines that read the C stream."""

import base64
import datetime as dt
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

import bagscope

# The peers (installed by .ci/run): a missing one fails the tests, it does not skip them.
import duckdb
import pyarrow as pa
import rosbags.dataframe as dataframe
import rosbags.highlevel as highlevel

EPOCH = dt.datetime(1970, 1, 1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, cli):
    p = tmp_path_factory.mktemp("arrow") / "demo.bag"
    subprocess.run([str(cli), "demo", str(p), "--seconds", "4"], check=True, capture_output=True)
    return p


def echo(cli, path, topic):
    out = subprocess.run([str(cli), "echo", "--json", "-t", topic, str(path)],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(x) for x in out.splitlines() if x.startswith("{")]


def number(want):
    """A JSON number as echo prints it (non-finite floats as strings)."""
    if isinstance(want, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[want]
    return want


def same(got, want, ty, path):
    """DuckDB's Python value `got` of Arrow type `ty` equals echo's JSON value `want`."""
    if pa.types.is_struct(ty):
        # A field of a type with no fields (or an array of them) has no column.
        names = {f.name for f in ty}
        for k, v in want.items():
            if k not in names:
                assert v == {} or (isinstance(v, list) and all(x == {} for x in v)), f"{path}.{k}: no column"
        want = {k: v for k, v in want.items() if k in names}
        assert set(got) == set(want), f"{path}: fields {sorted(got)} != {sorted(want)}"
        for f in ty:
            same(got[f.name], want[f.name], f.type, f"{path}.{f.name}")
    elif pa.types.is_list(ty) or pa.types.is_fixed_size_list(ty):
        assert len(got) == len(want), f"{path}: {len(got)} != {len(want)} elements"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, ty.value_type, f"{path}[{i}]")
    elif pa.types.is_binary(ty) or pa.types.is_fixed_size_binary(ty):
        assert got == base64.b64decode(want), f"{path}: bytes differ"
    elif pa.types.is_timestamp(ty):
        # DuckDB hands TIMESTAMP_NS to Python as a datetime (microseconds); the nanoseconds are
        # checked exactly through SQL in the test.
        assert got == EPOCH + dt.timedelta(seconds=want["secs"], microseconds=want["nsecs"] // 1000), path
    elif pa.types.is_duration(ty):
        ns = want["secs"] * 10**9 + want["nsecs"]
        if isinstance(got, int):
            # Parquet has no duration type: DuckDB reads one from Parquet as int64 nanoseconds.
            assert got == ns, path
        else:
            assert got == dt.timedelta(microseconds=int(ns / 1000)), path
    elif pa.types.is_floating(ty):
        want = number(want)
        if math.isnan(want):
            assert math.isnan(got), f"{path}: {got} != NaN"
        elif pa.types.is_float32(ty):
            assert np.float32(got) == np.float32(want), f"{path}: {got} != {want}"
        else:
            assert got == want, f"{path}: {got} != {want}"
    else:
        assert got == want and type(got) is type(want), f"{path}: {got!r} != {want!r}"


CASES = [
    # ROS 1: the demo (every kind of topic the app shows), written by bagscope.
    ("demo", None),
    # CDR: every primitive, fixed, bounded and unbounded arrays, nested arrays, strings.
    ("bags2", "rosbag2/rolling_sqlite3/cdr_test"),
    ("bags2", "rosbag2/rolling_mcap/cdr_test"),
    # Images (921,600-byte `data`), definitions bagscope ships.
    ("bags2", "rosbag2.js/sample.db3"),
    # CDR in MCAP, 94 topics of common types, written by rosbags.
    ("bags2", "rosbags-rs/test_bag_mcap"),
    # JSON (jsonschema) and protobuf channels.
    ("bags2", "lichtblick/example.mcap"),
    ("bags2", "keelson/test.mcap"),
]


@pytest.mark.parametrize("corpus,name", CASES)
def test_duckdb_reads_back_what_echo_prints(corpus, name, demo, bags2_dir, cli):
    path = demo if corpus == "demo" else bags2_dir / name
    rec = bagscope.open(path)
    topics = [t.name for t in rec.topics if not t.definition.startswith("none")]
    if name == "keelson/test.mcap":
        # 649 protobuf channels: those with messages, the first 25 by name.
        topics = sorted(t.name for t in rec.topics if t.count > 0)[:25]
    compared = 0
    for topic in topics:
        try:
            tab = rec.to_arrow(topic)
        except bagscope.DefinitionError:
            continue
        echoed = echo(cli, path, topic)
        con = duckdb.connect()
        con.register("tab", tab)
        rows = con.sql("SELECT * FROM tab").fetchall()
        assert len(rows) == len(echoed) == tab.num_rows, topic
        names = tab.schema.names
        for row, e in zip(rows, echoed):
            assert row[0] == e["time_ns"], f"{topic}: time"
            got = dict(zip(names[1:], row[1:]))
            same(got, e["message"], pa.struct(list(tab.schema)[1:]), topic)
            compared += 1
        # Nanoseconds of `time` values, exactly.
        if "header" in names and pa.types.is_timestamp(tab.schema.field("header").type.field("stamp").type):
            ns = [r[0] for r in con.sql("SELECT epoch_ns(header.stamp) FROM tab").fetchall()]
            want = [e["message"]["header"]["stamp"]["secs"] * 10**9 + e["message"]["header"]["stamp"]["nsecs"]
                    for e in echoed]
            assert ns == want, topic
    print(name, "compared", compared, "rows of", len(topics), "topics")
    assert compared > 0


def test_schema_is_the_definition_s_and_tables_concatenate(tmp_path, cli):
    a, b = tmp_path / "a.bag", tmp_path / "b.bag"
    subprocess.run([str(cli), "demo", str(a), "--seconds", "2"], check=True, capture_output=True)
    subprocess.run([str(cli), "demo", str(b), "--seconds", "3"], check=True, capture_output=True)
    with bagscope.open(a) as ra, bagscope.open(b) as rb:
        ta, tb = ra.to_arrow("/imu/data"), rb.to_arrow("/imu/data")
        assert ta.schema == tb.schema
        both = pa.concat_tables([ta, tb])
        assert both.num_rows == ta.num_rows + tb.num_rows
        t = ta.schema
        assert t.field("time_ns").type == pa.int64()
        assert t.field("header").type.field("stamp").type == pa.timestamp("ns")
        assert t.field("orientation_covariance").type == pa.list_(pa.field("item", pa.float64(), False), 9)
        assert t.metadata[b"bagscope.msgtype"] == b"sensor_msgs/Imu"
        img = ra.to_arrow("/camera/front/image_raw")
        assert img.schema.field("data").type == pa.binary()
        scan = ra.to_arrow("/scan")
        assert scan.schema.field("ranges").type == pa.list_(pa.field("item", pa.float32(), False))
        # Chosen fields keep their nesting; the time window is half-open.
        start = ra.start_ns
        part = ra.to_arrow("/imu/data", fields=["header.stamp", "linear_acceleration.x"],
                           start_ns=start, end_ns=start + 10**9)
        assert part.schema.names == ["time_ns", "header", "linear_acceleration"]
        assert [f.name for f in part.schema.field("header").type] == ["stamp"]
        assert part.num_rows == sum(1 for m in ra.messages(["/imu/data"], start, start + 10**9, raw=True))
        with pytest.raises(bagscope.NotFoundError, match="no field"):
            ra.to_arrow("/imu/data", fields=["header.nope"])
        with pytest.raises(bagscope.NotFoundError):
            ra.to_arrow("/nope")


def test_to_pandas_lays_out_a_topic_as_rosbags_dataframe(bags_dir):
    path = bags_dir / "robot_localization/test3_b.bag"
    keys = ["header.seq", "header.frame_id", "linear_acceleration.x", "angular_velocity.z", "orientation.w"]
    with highlevel.AnyReader([Path(path)]) as r:
        want = dataframe.get_dataframe(r, "/ardrone/imu", keys)
    with bagscope.open(path) as rec:
        got = rec.to_pandas("/ardrone/imu")
    assert len(got) == len(want) == 25217
    assert np.array_equal(got.index.to_numpy(), want.index.to_numpy())
    for k in keys:
        assert got[k].tolist() == want[k].tolist(), k
    assert "header.stamp" in got.columns and "orientation_covariance" in got.columns


def test_arrow_stream_feeds_duckdb_and_pyarrow(demo):
    with bagscope.open(demo) as rec:
        s = rec.arrow_stream("/scan")
        # DuckDB asks for the stream twice (schema, then rows): each call reads the topic again.
        n, mx = duckdb.sql("SELECT count(*), max(range_max) FROM s").fetchall()[0]
        full = rec.to_arrow("/scan")
        assert n == full.num_rows and mx == max(full.column("range_max").to_pylist())
        assert pa.schema(s) == full.schema
        batches = list(pa.RecordBatchReader.from_stream(s))
        assert pa.Table.from_batches(batches).equals(full)
        assert s.skipped == (0, None)
