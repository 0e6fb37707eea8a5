"""Every recording of the corpora opens through Python as the independent readers saw it, and
decodes to the values rosbags gave."""

import hashlib
import json
import math

import numpy as np
import pytest

import bagscope


def test_every_ros1_bag_matches_expected_json(bags_dir, expected):
    assert len(expected) == 77, "the corpus lists 77 bags"
    failures = []
    for name, exp in expected.items():
        try:
            check_bag(bags_dir / name, exp)
        except AssertionError as e:
            failures.append(f"{name}: {e}")
    assert not failures, "\n".join(failures)


def check_bag(path, exp):
    try:
        rec = bagscope.open(path)
    except bagscope.NotARecordingError:
        # An empty file, or one holding only a header (see the corpus README).
        assert exp["messages"] in (None, 0), "refused, but the readers saw messages"
        return
    with rec:
        assert exp["messages"] is not None, "opened, but an error was expected"
        topics = {t.name: t for t in rec.topics}
        assert set(topics) == set(exp["topics"]), f"topics {sorted(topics)}"
        assert {t.msgtype for t in rec.topics} == set(exp["types"])
        assert sum(t.count for t in rec.topics) == exp["messages"]
        for name, n in (exp.get("per_topic_messages") or {}).items():
            assert topics[name].count == n, f"{name}: {topics[name].count} != {n}"
        if exp.get("start_ns") is not None:
            assert (rec.start_ns, rec.end_ns) == (exp["start_ns"], exp["end_ns"])
        n, last, largest = 0, 0, 0
        for m in rec.messages(raw=True):
            assert m.time_ns >= last, "out of time order"
            last = m.time_ns
            largest = max(largest, len(m.data))
            n += 1
        assert n == exp["messages"]
        if exp.get("max_message_bytes") is not None:
            assert largest == exp["max_message_bytes"]
        if isinstance(exp.get("anomalies"), str):
            assert rec.warnings, "an anomalous bag opened without warnings"


def plain(v):
    """A decoded value with its messages as dicts (arrays and bytes kept as they are)."""
    if isinstance(v, bagscope.Msg):
        return {k: plain(v[k]) for k in v.keys()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def same(got, want, path=""):
    """Equal as corpus2.rs compares: a float exactly or as the same float32, `byte` and `char`
    modulo 256, long arrays given as {len, sha256} of their bytes, an empty type's rosidl
    placeholder member no field."""
    if isinstance(want, dict) and set(want) == {"len", "sha256"}:
        raw = got.tobytes() if isinstance(got, np.ndarray) else bytes(got)
        n = len(got)
        assert n == want["len"] and hashlib.sha256(raw).hexdigest() == want["sha256"], f"{path}: bytes differ"
    elif isinstance(want, dict):
        if got == {} and set(want) == {"structure_needs_at_least_one_member"}:
            return
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        if isinstance(got, (bytes, bytearray)):
            assert len(got) == len(want) and all((a - b) % 256 == 0 for a, b in zip(got, want)), f"{path}: bytes differ"
            return
        if isinstance(got, np.ndarray):
            if got.dtype in (np.int8, np.uint8):
                assert len(got) == len(want) and all((int(a) - b) % 256 == 0 for a, b in zip(got, want)), f"{path}"
                return
            got = got.tolist()
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {len(got)} != {len(want)} elements"
        for i, (a, b) in enumerate(zip(got, want)):
            same(a, b, f"{path}[{i}]")
    elif isinstance(want, float) or isinstance(got, float):
        want = float(want)
        if math.isnan(want):
            assert math.isnan(got), f"{path}: {got} != NaN"
        else:
            assert got == want or np.float32(got) == np.float32(want), f"{path}: {got} != {want}"
    elif isinstance(want, int) and isinstance(got, int) and not isinstance(want, bool):
        # `byte` and `char` signedness differs between readers: modulo 256 within a byte.
        in_byte = -128 <= want < 256 and -128 <= got < 256
        assert got == want or (in_byte and (got - want) % 256 == 0), f"{path}: {got} != {want}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def test_decoded_values_equal_rosbags(bags2_dir):
    lines = [json.loads(x) for x in (bags2_dir / "expected_decoded.jsonl").read_text().splitlines()]
    assert len(lines) == 234, "the corpus's decoded sample"
    by_topic = {}
    failures = []
    for e in lines:
        key = (e["bag"], e["topic"])
        if key not in by_topic:
            with bagscope.open(bags2_dir / e["bag"]) as rec:
                by_topic[key] = list(rec.messages(topics=[e["topic"]]))
        m = by_topic[key][e["index"]]
        try:
            assert m.time_ns == e["time_ns"], f"time {m.time_ns} != {e['time_ns']}"
            assert hashlib.sha256(m.data).hexdigest() == e["sha256"], "bytes differ"
            same(plain(m.msg), e["message"])
        except AssertionError as err:
            failures.append(f"{e['bag']} {e['topic']} #{e['index']}: {err}")
    assert not failures, f"{len(failures)} of {len(lines)}:\n" + "\n".join(failures[:20])


def test_every_damaged_file_raises_bagscope_error_or_recovers(bags_dir, bags2_dir):
    """Whatever the file, reading it ends in messages or a bagscope.Error, never a crash."""
    files = [p for d in (bags_dir, bags2_dir) for p in sorted(d.rglob("*")) if p.is_file()
             and p.suffix in (".bag", ".mcap", ".db3", ".zstd", ".active")]
    assert len(files) > 100
    kinds = set()
    for p in files:
        try:
            with bagscope.open(p) as rec:
                for _ in rec.messages():
                    pass
        except bagscope.Error as e:
            kinds.add(type(e).__name__)
    assert "NotARecordingError" in kinds


def test_every_ros1_bag_rosbags_reads_agrees_with_rosbags(bags_dir, expected):
    """The same connections, counts and messages (time, topic, bytes) as rosbags' AnyReader on
    every bag of the corpus it was cross-checked with."""
    from pathlib import Path

    import rosbags.highlevel as highlevel
    import rosbags.rosbag1 as rosbag1

    names = [n for n, e in expected.items() if e.get("cross_checked_with", "").startswith("rosbags")]
    assert len(names) == 65
    failures, refused = [], []
    for name in names:
        path = bags_dir / name
        try:
            try:
                with highlevel.AnyReader([Path(path)]) as r:
                    pass
                reader = highlevel.AnyReader([Path(path)])
            except highlevel.AnyReaderError:
                # AnyReader parses every stored definition first, and refuses a bag whose
                # definitions lack a type; its ROS 1 reader, underneath, reads the bag.
                reader = rosbag1.Reader(Path(path))
                refused.append(name)
            with reader as r:
                theirs_topics = {t: (i.msgtype, i.msgcount) for t, i in r.topics.items()}
                theirs = sorted((t, c.topic, hashlib.sha256(raw).hexdigest()) for c, t, raw in r.messages())
            with bagscope.open(path) as rec:
                # rosbags names ROS 1 types `pkg/msg/Type`.
                ours_topics = {t.name: (t.msgtype.replace("/", "/msg/", 1) if "/msg/" not in t.msgtype
                                        else t.msgtype, t.count) for t in rec.topics}
                ours = sorted((m.time_ns, m.topic, hashlib.sha256(m.data).hexdigest())
                              for m in rec.messages(raw=True))
            assert ours_topics == theirs_topics, f"topics {ours_topics} != {theirs_topics}"
            assert ours == theirs, "messages differ (time, topic, bytes)"
        except (AssertionError, bagscope.Error) as err:
            failures.append(f"{name}: {type(err).__name__}: {str(err)[:300]}")
    assert not failures, f"{len(failures)} of {len(names)}:\n" + "\n".join(failures)
    assert len(refused) < 5, refused
