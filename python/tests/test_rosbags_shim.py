"""The common rosbags snippet gives the same through bagscope.rosbags.AnyReader as through
rosbags' own AnyReader (rosbags 0.11.9, from the requirements)."""

import copy
import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bagscope.rosbags import AnyReader as Ours

# The peer (installed by .ci/run): missing, the tests fail rather than skip.
import rosbags.highlevel as rosbags


def snippet(reader_cls, path, topic=None, **kw):
    """What a typical script does: connections of one topic, messages, deserialize."""
    out = []
    with reader_cls([Path(path)], **kw) as r:
        conns = [c for c in r.connections if topic is None or c.topic == topic]
        meta = sorted((c.topic, c.msgtype, c.msgcount, digest(r, c)) for c in r.connections)
        times = (r.start_time, r.end_time, r.duration, r.message_count)
        topics = {t: (i.msgtype, i.msgcount) for t, i in r.topics.items()}
        for conn, t, raw in r.messages(connections=conns):
            msg = r.deserialize(raw, conn.msgtype)
            out.append((conn.topic, t, bytes(raw), msg))
    return meta, times, topics, out


def digest(reader, conn):
    """A connection's digest. Where a ROS 2 recording states no type hash, rosbags gives ''
    and bagscope the hash rosbag2 computes: rosbags' own typestore computes it here from the
    definitions it registered, so the two are held to each other."""
    if isinstance(reader, Ours) or conn.digest:
        return conn.digest
    if type(conn.ext).__name__ == "ConnectionExtRosbag2":
        if conn.msgtype not in reader.typestore.fielddefs:
            # An empty definition (std_msgs/msg/Empty) is not registered: ask rosbags' store.
            from rosbags.typesys import Stores, get_typestore
            return get_typestore(Stores.LATEST).hash_rihs01(conn.msgtype)
        return reader.typestore.hash_rihs01(conn.msgtype)
    return conn.digest


def fields(msg):
    """A message's values for comparison: numbers and strings as they are (a negative `byte`
    modulo 256: rosbags reads ROS 2's `byte`, an octet, as int8; bagscope as uint8), arrays as
    lists, nested messages by their fields."""
    if isinstance(msg, bool):
        return msg
    if isinstance(msg, int):
        return msg % 256 if -128 <= msg < 0 else msg
    if isinstance(msg, np.ndarray):
        return fields(msg.tolist())
    if isinstance(msg, (bytes, bytearray)):
        return list(msg)
    if isinstance(msg, (list, tuple)):
        return [fields(x) for x in msg]
    if dataclasses.is_dataclass(msg):
        # rosbags' messages: their fields (constants are class variables, not fields).
        # Constants are fields with defaults there; bagscope has them as attributes only.
        return {
            f.name: fields(getattr(msg, f.name))
            for f in dataclasses.fields(msg)
            if f.name != "__msgtype__" and f.default is dataclasses.MISSING
        }
    if hasattr(msg, "keys") and hasattr(msg, "__msgtype__"):
        return {k: fields(msg[k]) for k in msg.keys()}
    return msg


CASES = [
    ("bags", "bag-reader-java/Float64.bag", None),
    ("bags", "robot_localization/test3_b.bag", None),
    ("bags", "rosbag.js/example.bag", None),
    ("bags2", "rosbags-rs/test_bag_sqlite3", None),
    ("bags2", "rosbags-rs/test_bag_mcap", None),
    ("bags2", "rosbag2/mcap_v6_cdr_test", None),
]


@pytest.mark.parametrize("corpus,name,topic", CASES)
def test_the_rosbags_snippet_gives_what_rosbags_gives(corpus, name, topic, bags_dir, bags2_dir):
    path = (bags_dir if corpus == "bags" else bags2_dir) / name
    # A recording without stored definitions needs rosbags told the distro; bagscope finds the
    # shipped ones itself (the argument is accepted and not needed).
    from rosbags.typesys import Stores, get_typestore
    kw = {"default_typestore": get_typestore(Stores.ROS2_HUMBLE)} if corpus == "bags2" else {}
    meta, times, topics, got = snippet(Ours, path, topic, **kw)
    meta_r, times_r, topics_r, want = snippet(rosbags.AnyReader, path, topic, **kw)
    assert meta == meta_r
    assert times == times_r
    assert topics == topics_r
    assert len(got) == len(want) > 0
    for (t1, ts1, raw1, m1), (t2, ts2, raw2, m2) in zip(got, want):
        assert (t1, ts1, raw1) == (t2, ts2, raw2)
        assert fields(m1) == fields(m2), (t1, ts1)


def _differs(x, y, path=""):
    """Where two `asdict()` trees differ (numpy arrays by dtype and values), or None."""
    if isinstance(x, dict):
        if x.keys() != y.keys():
            return f"{path}: keys {list(x)} vs {list(y)}"
        return next((d for k in x if (d := _differs(x[k], y[k], f"{path}.{k}"))), None)
    if isinstance(x, (list, tuple)):
        if len(x) != len(y):
            return f"{path}: {len(x)} vs {len(y)} items"
        return next((d for i, (a, b) in enumerate(zip(x, y)) if (d := _differs(a, b, f"{path}[{i}]"))), None)
    if isinstance(x, np.ndarray):
        if not isinstance(y, np.ndarray) or x.dtype != y.dtype:
            return f"{path}: {x.dtype} vs {getattr(y, 'dtype', type(y))}"
        return None if np.array_equal(x, y, equal_nan=x.dtype.kind == "f") else f"{path}: values"
    if type(x) is not type(y) or not (x == y or (x != x and y != y)):
        return f"{path}: {x!r} vs {y!r}"
    return None


# What the drop-in still gives otherwise: a ROS 2 `byte[]` is an unsigned octet array
# (ROS 2's IDL), where rosbags 0.11.9 makes it int8 as ROS 1's `byte`.
KNOWN = {"/test/std_msgs/byte_multi_array": ".data: int8 vs uint8"}


def test_fields_are_rosbags_fields(bags_dir, bags2_dir):
    """`dataclasses.fields()` and `asdict()` of every message as rosbags' generated classes
    give them: the fields, the constants (defaults, as rosbags' string-annotated ClassVars
    are), `__msgtype__` last; `structure_needs_at_least_one_member` in an empty message."""
    for rec in [bags_dir / "rosbag.js/example.bag", bags2_dir / "rosbags-rs/test_bag_sqlite3",
                bags2_dir / "rosbags-rs/test_bag_mcap"]:
        theirs = {}
        with rosbags.AnyReader([rec]) as r:
            for c, _, raw in r.messages():
                m = r.deserialize(raw, c.msgtype)
                theirs.setdefault(c.topic, []).append(
                    ([f.name for f in dataclasses.fields(m)], dataclasses.asdict(m), list(vars(m)))
                )
        with Ours([rec]) as r:
            for c, _, raw in r.messages():
                m = r.deserialize(raw, c.msgtype)
                names, tree, attrs = theirs[c.topic].pop(0)
                assert [f.name for f in dataclasses.fields(m)] == names, c.topic
                # Made without `__init__`, with the attributes it would have set.
                assert list(vars(m)) == attrs, c.topic
                d = _differs(tree, dataclasses.asdict(m))
                assert d == KNOWN.get(c.topic), f"{c.topic}{d}"
                assert m == dataclasses.replace(m)
        assert all(not v for v in theirs.values())
    with Ours([bags_dir / "rosbag.js/example.bag"]) as r:
        conn = next(c for c in r.connections if c.topic == "/rosout")
        _, _, raw = next(r.messages(connections=[conn]))
        msg = r.deserialize(raw, conn.msgtype)
        assert (msg.DEBUG, msg.INFO, msg.WARN, msg.ERROR, msg.FATAL) == (1, 2, 4, 8, 16)
        assert type(msg).ERROR == 8


def test_deserialize_makes_a_new_message_at_each_call(bags_dir):
    """As rosbags does: a message changed by the caller is not what the next call gives."""
    with Ours([bags_dir / "rosbag.js/example.bag"]) as r:
        for c, _, raw in r.messages():
            a, b = r.deserialize(raw, c.msgtype), r.deserialize(raw, c.msgtype)
            assert a == b and a is not b
            break


def test_two_threads_share_one_iteration_and_its_deserialize(bags_dir, in_two_threads):
    """Each message goes to one thread, and each decodes what it was given, whether or not the
    other took a message since (the bytes handed out last are the other's then)."""
    rec = bags_dir / "rosbag.js/example.bag"
    with Ours([rec]) as r:
        want = {(c.topic, t): dataclasses.asdict(r.deserialize(raw, c.msgtype)) for c, t, raw in r.messages()}
        it = r.messages()
        got = [{}, {}]

        def take(k):
            for c, t, raw in it:
                got[k][(c.topic, t)] = dataclasses.asdict(r.deserialize(raw, c.msgtype))

        in_two_threads(take)
    assert len(got[0]) + len(got[1]) == len(want)
    assert {**got[0], **got[1]} == want


def test_deserialize_without_the_message_it_came_with(bags_dir):
    with Ours([bags_dir / "bag-reader-java/Float64.bag"]) as r:
        (conn, _, raw), = list(r.messages())
        assert r.deserialize(bytes(raw), conn.msgtype).data == pytest.approx(1.003062456558312, abs=0)


def test_deserialize_takes_any_bytes_and_type_name(bags_dir):
    """The Rust fast path (the bytes just handed out, with their type) and everything else:
    bytes kept from an earlier message, `pkg/Type` for `pkg/msg/Type`, another type's name, a
    closed reader."""
    rec = bags_dir / "rosbag.js/example.bag"
    with rosbags.AnyReader([rec]) as r:
        want = [dataclasses.asdict(r.deserialize(raw, c.msgtype)) for c, _, raw in r.messages()]
    with Ours([rec]) as r:
        items = list(r.messages())
        # Every message decoded after the iteration ended: none is the last one handed out.
        assert [dataclasses.asdict(r.deserialize(raw, c.msgtype)) for c, _, raw in items] == want
        c, _, raw = items[0]
        short = c.msgtype.replace("/msg/", "/")
        assert dataclasses.asdict(r.deserialize(raw, short)) == want[0]
        for c, _, raw in r.messages():
            assert dataclasses.asdict(r.deserialize(raw, c.msgtype.replace("/msg/", "/"))) == want[0]
            with pytest.raises(AnyReaderError, match="no type nope/msg/Nope"):
                r.deserialize(raw, "nope/Nope")
            break
    with pytest.raises(AnyReaderError, match="not open"):
        r.deserialize(raw, c.msgtype)


def test_messages_pickle_into_a_process_that_never_read_them(bags_dir, tmp_path):
    """Real dataclasses: pickled here, unpickled equal in a fresh interpreter (which makes their
    classes again from what the pickle says), copied and replaced."""
    with Ours([bags_dir / "rosbag.js/example.bag"]) as r:
        msgs = [r.deserialize(raw, c.msgtype) for c, _, raw in r.messages()][:50]
    (tmp_path / "m.pickle").write_bytes(pickle.dumps(msgs))
    code = (
        "import dataclasses, pickle, sys; ms = pickle.load(open(sys.argv[1], 'rb')); "
        "print(repr([dataclasses.asdict(m) for m in ms]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.pickle")], check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == repr([dataclasses.asdict(m) for m in msgs])
    assert pickle.loads(pickle.dumps(msgs)) == msgs
    assert copy.deepcopy(msgs) == msgs
    for m in msgs:
        f = dataclasses.fields(m)[0].name
        changed = dataclasses.replace(m, **{f: "changed"})
        assert type(changed) is type(m) and getattr(changed, f) == "changed"


# What rosbags' own tests cannot reach (test_rosbags_suite.py runs those): recordings made
# here with rosbags' writers, read through the drop-in.

from rosbags.rosbag1 import Writer as Writer1
from rosbags.rosbag2 import Writer as Writer2
from rosbags.typesys import Stores, get_typestore

import bagscope
from bagscope.rosbags import AnyReaderError

STORE = get_typestore(Stores.LATEST)


def _ros1_bags(d):
    """rosbags' test_anyreader1 layout: three bags over the same topics, overlapping in time."""
    paths = [d / "ros1_1.bag", d / "ros1_2.bag", d / "ros1_3.bag"]
    with Writer1(paths[0]) as w:
        t1 = w.add_connection("/topic1", "std_msgs/msg/Int8", typestore=STORE)
        t2 = w.add_connection("/topic2", "std_msgs/msg/Int16", typestore=STORE)
        w.write(t1, 1, b"\x01")
        w.write(t2, 2, b"\x02\x00")
        w.write(t1, 9, b"\x09")
    with Writer1(paths[1]) as w:
        t1 = w.add_connection("/topic1", "std_msgs/msg/Int8", typestore=STORE)
        w.write(t1, 5, b"\x05")
    with Writer1(paths[2]) as w:
        t2 = w.add_connection("/topic2", "std_msgs/msg/Int16", typestore=STORE)
        w.write(t2, 15, b"\x15\x00")
    return paths


def test_several_recordings_keep_their_topic_names(tmp_path):
    paths = _ros1_bags(tmp_path)
    with Ours(paths) as r:
        assert (r.start_time, r.end_time, r.duration, r.message_count) == (1, 16, 15, 5)
        assert list(r.topics) == ["/topic1", "/topic2"]
        assert [len(r.topics[t].connections) for t in r.topics] == [2, 2]
        assert [r.topics[t].msgcount for t in r.topics] == [3, 2]
        got = [(c.topic, t, bytes(raw), r.deserialize(raw, c.msgtype).data) for c, t, raw in r.messages()]
        assert got == [
            ("/topic1", 1, b"\x01", 1), ("/topic2", 2, b"\x02\x00", 2), ("/topic1", 5, b"\x05", 5),
            ("/topic1", 9, b"\x09", 9), ("/topic2", 15, b"\x15\x00", 21),
        ]
        # Each connection's owner is its own recording; filtering by connections works.
        owners = {c.owner.path.name for c in r.topics["/topic1"].connections}
        assert owners == {"ros1_1.bag", "ros1_2.bag"}
        only = r.topics["/topic1"].connections
        assert [t for _, t, _ in r.messages(connections=only)] == [1, 5, 9]
        assert [t for _, t, _ in r.messages(connections=only[1:])] == [5]
    # bagscope.open of several keeps the app's rule: each recording under a namespace.
    with bagscope.open(paths) as rec:
        assert "/ros1_1/topic1" in {t.name for t in rec.topics}


def test_the_life_cycle_and_errors_are_rosbags(tmp_path):
    paths = _ros1_bags(tmp_path)
    with pytest.raises(AnyReaderError, match="at least one"):
        Ours([])
    with pytest.raises(FileNotFoundError, match="missing"):
        Ours([tmp_path / "nope.bag"])
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(AnyReaderError, match="Unrecognized storage format"):
        Ours([tmp_path / "notes.txt"])
    r = Ours(paths[:1])
    for use in (lambda: r.topics, lambda: next(r.messages()), lambda: r.start_time, r.close):
        with pytest.raises(AnyReaderError, match="not open"):
            use()
    r.open()
    with pytest.raises(AnyReaderError, match="already open"):
        r.open()
    assert len(r.connections) == 2
    r.close()
    assert r.connections == []
    with pytest.raises(AnyReaderError, match="not open"):
        r.close()
    # bagscope's own errors fit Python's: a missing file is an OSError and a FileNotFoundError.
    with pytest.raises(OSError):
        bagscope.open(tmp_path / "nope.bag")
    with pytest.raises(FileNotFoundError):
        bagscope.open(tmp_path / "nope.bag")
    with pytest.raises(bagscope.Error):
        bagscope.open(tmp_path / "nope.bag")


def test_messages_are_dataclasses_with_numpy_arrays(tmp_path):
    path = tmp_path / "imu"
    Imu = STORE.types["sensor_msgs/msg/Imu"]
    Header = STORE.types["std_msgs/msg/Header"]
    Time = STORE.types["builtin_interfaces/msg/Time"]
    Quaternion = STORE.types["geometry_msgs/msg/Quaternion"]
    Vector3 = STORE.types["geometry_msgs/msg/Vector3"]
    Img = STORE.types["sensor_msgs/msg/CompressedImage"]
    imu = Imu(Header(Time(3, 4), "imu"), Quaternion(0.0, 0.0, 0.0, 1.0), np.arange(9.0),
              Vector3(1.0, 2.0, 3.0), np.zeros(9), Vector3(0.0, 0.0, 9.8), np.ones(9))
    img = Img(Header(Time(5, 6), "cam"), "jpeg", np.array([1, 2, 255], dtype=np.uint8))
    with Writer2(path, version=Writer2.VERSION_LATEST) as w:
        c1 = w.add_connection("/imu", "sensor_msgs/msg/Imu", typestore=STORE)
        c2 = w.add_connection("/img", "sensor_msgs/msg/CompressedImage", typestore=STORE)
        w.write(c1, 1, bytes(STORE.serialize_cdr(imu, "sensor_msgs/msg/Imu")))
        w.write(c2, 2, bytes(STORE.serialize_cdr(img, "sensor_msgs/msg/CompressedImage")))
    with Ours([path]) as r:
        (c, _, raw), (c2_, _, raw2) = list(r.messages())
        m = r.deserialize(raw, c.msgtype)
        m2 = r.deserialize(raw2, c2_.msgtype)
    assert dataclasses.is_dataclass(m) and m.__msgtype__ == "sensor_msgs/msg/Imu"
    assert m.header.stamp.__msgtype__ == "builtin_interfaces/msg/Time"
    assert (m.header.stamp.sec, m.header.stamp.nanosec, m.header.frame_id) == (3, 4, "imu")
    assert isinstance(m.orientation_covariance, np.ndarray) and m.orientation_covariance.dtype == np.float64
    assert m.orientation_covariance.tolist() == list(range(9))
    assert isinstance(m2.data, np.ndarray) and m2.data.dtype == np.uint8 and m2.data.tolist() == [1, 2, 255]
    d = dataclasses.asdict(m2)
    # As rosbags' classes: `__msgtype__` is a field (test_fields_are_rosbags_fields).
    stamp = {"sec": 5, "nanosec": 6, "__msgtype__": "builtin_interfaces/msg/Time"}
    assert d["format"] == "jpeg" and d["header"]["stamp"] == stamp
    assert [f.name for f in dataclasses.fields(m.header)] == ["stamp", "frame_id", "__msgtype__"]
    moved = dataclasses.replace(m.header, frame_id="base")
    assert moved.frame_id == "base" and moved.stamp == m.header.stamp
    assert m.linear_acceleration == type(m.linear_acceleration)(0.0, 0.0, 9.8)
    # The same field values as rosbags' own classes have.
    assert fields(m) == fields(STORE.deserialize_cdr(raw, "sensor_msgs/msg/Imu"))


def test_ros2_connections_carry_format_qos_and_type_hash(tmp_path, bags2_dir):
    # A recording that states its hashes (rosbags writes them into metadata.yaml).
    path = tmp_path / "stated"
    types = ["sensor_msgs/msg/Imu", "sensor_msgs/msg/PointCloud2", "nav_msgs/msg/Odometry",
             "diagnostic_msgs/msg/DiagnosticArray", "std_msgs/msg/Char", "std_msgs/msg/Empty",
             "tf2_msgs/msg/TFMessage", "visualization_msgs/msg/MarkerArray"]
    with Writer2(path, version=Writer2.VERSION_LATEST) as w:
        for i, t in enumerate(types):
            w.add_connection(f"/t{i}", t, typestore=STORE)
    with Ours([path]) as r:
        for c in r.connections:
            assert c.digest == STORE.hash_rihs01(c.msgtype), c.msgtype
            assert c.msgdef.format.name == "MSG"
            assert c.ext.serialization_format == "cdr"
    # An MCAP that rosbag2 wrote, opened alone: no hash stated, bagscope computes rosbag2's.
    mcap = bags2_dir / "rosbags-rs/test_bag_mcap"
    files = sorted(mcap.glob("*.mcap"))
    with rosbags.AnyReader(files[:1]) as peer:
        # rosbags' typestore of the file's own definitions (Range changed across distros).
        theirs = {c.msgtype: peer.typestore.hash_rihs01(c.msgtype) for c in peer.connections
                  if c.msgdef.data}
    with Ours(files[:1]) as r:
        assert r.connections
        for c in r.connections:
            assert c.digest.startswith("RIHS01_")
            if c.msgtype in theirs:
                assert c.digest == theirs[c.msgtype], c.msgtype
            assert isinstance(c.ext.offered_qos_profiles, list)
        # (rosbags wrote this file without QoS; test_connections_are_rosbags_on_the_corpora
        # holds the profiles of the recordings that have them to rosbags'.)
    # Opened alone it is complete: a storage fact, not a warning.
    with bagscope.open(files[0]) as rec:
        info = rec.info()
        assert not any("metadata.yaml" in w for w in info["warnings"]), info["warnings"]
        assert "metadata.yaml" in info["storage"]


def test_a_stated_type_hash_that_disagrees_is_refused(tmp_path, cli):
    path = tmp_path / "bag"
    with Writer2(path, version=9) as w:
        conn = w.add_connection("/x", "x/msg/X", msgdef="uint8 foo", rihs01="RIHS01_" + "0" * 64)
        w.write(conn, 42, b"\x00\x01\x00\x00\x07")
    r = Ours([path])
    with pytest.raises(AnyReaderError, match="hash mismatch"):
        r.open()
    assert not r.stack and r.connections == []
    with bagscope.open(path) as rec:
        assert any("type hash" in w for w in rec.info()["warnings"]), rec.info()["warnings"]
    # `info` and `check` say so as a warning: a rosbag2 recording whose messages all read is
    # not damaged.
    import subprocess

    info = subprocess.run([cli, "info", path], capture_output=True, text=True, check=True).stdout
    assert "states type hash RIHS01_000" in info, info
    run = subprocess.run([cli, "check", path], capture_output=True, text=True)
    assert run.returncode == 0 and "OK (1 warnings)" in run.stdout, run.stdout
    assert "warning: /x (x/msg/X): the recording states type hash" in run.stdout, run.stdout


def test_a_file_with_nothing_readable_is_refused(tmp_path):
    import io
    from mcap.writer import Writer

    buf = io.BytesIO()
    w = Writer(buf)
    w.start(profile="ros2", library="test")
    w.finish()
    whole = buf.getvalue()
    header_end = 9 + int.from_bytes(whole[9:17], "little") + 8
    (tmp_path / "magic.mcap").write_bytes(whole[:9])
    (tmp_path / "header.mcap").write_bytes(whole[:header_end])
    (tmp_path / "whole.mcap").write_bytes(whole)
    for name in ("magic.mcap", "header.mcap"):
        with pytest.raises(AnyReaderError, match="seems to be empty"):
            Ours([tmp_path / name]).open()
    with Ours([tmp_path / "whole.mcap"]) as r:
        assert r.connections == [] and r.message_count == 0


def test_a_newer_bag_version_is_named_as_it_is(tmp_path):
    p = tmp_path / "v3.bag"
    p.write_bytes(b"#ROSBAG V3.0\n" + b"\0" * 64)
    with pytest.raises(bagscope.NotARecordingError, match="bag format 3.0 is not one bagscope reads"):
        bagscope.open(p)


def _plain(x):
    """Enums by name, named tuples and lists as tuples: rosbags' values and the drop-in's
    compared by what they say."""
    from enum import Enum

    if isinstance(x, Enum):
        return x.name
    if isinstance(x, (list, tuple)):
        return tuple(_plain(y) for y in x)
    return x


def _connections(reader_cls, path, ros2, **kw):
    with reader_cls([path], **kw) as r:
        out = []
        for c in r.connections:
            if ros2:
                # Policies and depth; durations differ where metadata.yaml writes an infinite
                # one as 0 (rosbags reads metadata.yaml) and the storage file as RMW's
                # 2147483647 s 4294967295 ns (bagscope reads the storage's).
                qos = tuple(_plain((q.history, q.depth, q.reliability, q.durability, q.liveliness))
                            for q in c.ext.offered_qos_profiles)
                ext = (c.ext.serialization_format, qos)
            else:
                ext = _plain(c.ext)
            # An old rosbag2 metadata.yaml may name a type `pkg/Type`, which rosbags passes on
            # and the drop-in gives as `pkg/msg/Type`, as it names every type: the same type.
            msgtype = c.msgtype if c.msgtype.count("/") != 1 else c.msgtype.replace("/", "/msg/")
            out.append((c.topic, c.id if not ros2 else 0, msgtype, c.msgcount, ext,
                        c.msgdef.format.name, c.msgdef.data if not ros2 else ""))
        return sorted(out, key=repr)


def test_connections_are_rosbags_on_the_corpora(bags_dir, bags2_dir):
    """Every ROS 1 bag and rosbag2 recording of the corpora that rosbags opens: the same
    connections (topic, id, type, count, ext with callerid, latching and QoS, definition format
    and text) through the drop-in as through rosbags."""
    checked = 0
    ros2_store = get_typestore(Stores.ROS2_HUMBLE)
    paths = [(p, False) for p in sorted(bags_dir.rglob("*.bag"))]
    paths += [(p.parent, True) for p in sorted(bags2_dir.rglob("metadata.yaml"))]
    for path, ros2 in paths:
        kw = {"default_typestore": ros2_store} if ros2 else {}
        try:
            want = _connections(rosbags.AnyReader, path, ros2, **kw)
        except Exception:
            continue  # rosbags refuses it (the corpus lists why); bagscope may read it.
        got = _connections(Ours, path, ros2)
        if ros2 and {c[0] for c in got} != {c[0] for c in want}:
            # Topics the storage has and metadata.yaml does not list (rosbags reads only
            # metadata.yaml's): compared where both have them.
            got = [c for c in got if c[0] in {w[0] for w in want}]
        if ros2 and got != want:
            # Where metadata.yaml and the storage name different types (rosbags takes
            # metadata.yaml's, bagscope the storage's), bagscope says so.
            with bagscope.open(path) as rec:
                differ = [w for w in rec.warnings if "in metadata.yaml," in w and "in storage" in w]
            assert differ, path
            got, want = [c[:2] + c[3:] for c in got], [c[:2] + c[3:] for c in want]
        assert got == want, path
        checked += 1
    assert checked >= 75, checked


@pytest.mark.parametrize("plugin", ["SQLITE3", "MCAP"])
@pytest.mark.parametrize("raw", [False, True])
def test_two_connections_of_one_topic_stay_apart(tmp_path, plugin, raw):
    """rosbags' own test_duplicate_topic_connections (rosbag2/test_reader.py), through
    AnyReader: two connections of /same (the second with a QoS of its own) are two connections,
    each with its ext and its own message selection, the directory or its storage file."""
    from rosbags.rosbag2 import StoragePlugin
    from rosbags.interfaces import Qos as RQos, QosDurability as D, QosHistory as H
    from rosbags.interfaces import QosLiveliness as L, QosReliability as R, QosTime as T

    store = get_typestore(Stores.LATEST)
    name = "std_msgs/msg/Int8"
    qos = RQos(H.KEEP_LAST, 1, R.RELIABLE, D.TRANSIENT_LOCAL, T(0, 0), T(0, 0), L.AUTOMATIC, T(0, 0),
               avoid_ros_namespace_conventions=False)
    path = tmp_path / "bag"
    with Writer2(path, version=9, storage_plugin=StoragePlugin[plugin]) as w:
        first = w.add_connection("/same", name, typestore=store)
        second = w.add_connection("/same", name, typestore=store, offered_qos_profiles=[qos])
        w.write(first, 0, store.serialize_cdr(store.types[name](10), name))
        w.write(second, 1, store.serialize_cdr(store.types[name](20), name))
    read = next(path.glob("*.mcap" if plugin == "MCAP" else "*.db3")) if raw else path
    with Ours([read]) as r:
        assert len(r.connections) == 2
        assert r.topics["/same"].msgcount == 2
        msgs = list(r.messages())
        assert [r.deserialize(d, c.msgtype).data for c, _, d in msgs] == [10, 20]
        assert msgs[0][0].ext != msgs[1][0].ext
        assert len(msgs[1][0].ext.offered_qos_profiles) == 1
        for i, c in enumerate(r.connections):
            sel = list(r.messages([c]))
            assert len(sel) == 1 and sel[0][0] == c and sel[0][1] == i
