"""The common rosbags snippet gives the same through bagscope.rosbags.AnyReader as through
rosbags' own AnyReader (rosbags 0.11.9, from the requirements)."""

import dataclasses
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


def test_constants_are_attributes_not_fields(bags_dir):
    with Ours([bags_dir / "rosbag.js/example.bag"]) as r:
        conn = next(c for c in r.connections if c.topic == "/rosout")
        _, _, raw = next(r.messages(connections=[conn]))
        msg = r.deserialize(raw, conn.msgtype)
        assert (msg.DEBUG, msg.INFO, msg.WARN, msg.ERROR, msg.FATAL) == (1, 2, 4, 8, 16)
        assert "ERROR" not in [f.name for f in dataclasses.fields(msg)]


def test_deserialize_without_the_message_it_came_with(bags_dir):
    with Ours([bags_dir / "bag-reader-java/Float64.bag"]) as r:
        (conn, _, raw), = list(r.messages())
        assert r.deserialize(bytes(raw), conn.msgtype).data == pytest.approx(1.003062456558312, abs=0)
