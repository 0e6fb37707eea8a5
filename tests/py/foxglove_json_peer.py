"""Foxglove's own schemas hold the JSON messages of a virtual topic bagscope exported: every
message of the MCAP file's JSON channels is converted, strictly, into the protobuf message of
Foxglove's SDK (`foxglove.messages.X.get_schema()`, the FileDescriptorSet Foxglove's tools use):
a key the schema lacks, a number where a string goes, a time that is not `{sec, nsec}`, bytes
that are not base64 or an enum value the schema does not name fail. Then each SceneUpdate's cube
holds, in order, the orientation rosbags decodes from /imu_data of the recording.

usage: python3 foxglove_json_peer.py RECORDING EXPORTED.mcap
"""
import base64
import json
import sys
from pathlib import Path

import foxglove.messages as fm
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor as F
from mcap.reader import make_reader
from rosbags.highlevel import AnyReader

INTS = {F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_FIXED32,
        F.TYPE_FIXED64, F.TYPE_SFIXED32, F.TYPE_SFIXED64, F.TYPE_SINT32, F.TYPE_SINT64}


def repeated(f):
    # protobuf 5 has `label`; later versions `is_repeated`.
    r = getattr(f, "is_repeated", None)
    return r if r is not None else f.label == F.LABEL_REPEATED


def message_class(name):
    schema = getattr(fm, name.removeprefix("foxglove.")).get_schema()
    assert schema.encoding == "protobuf", schema.encoding
    fds = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def value(f, v, at):
    if f.type == F.TYPE_MESSAGE:
        if f.message_type.full_name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
            assert isinstance(v, dict) and set(v) <= {"sec", "nsec"}, (at, v)
            assert 0 <= v.get("nsec", 0) < 10**9, (at, v)
            return {"seconds": v.get("sec", 0), "nanos": v.get("nsec", 0)}
        return v
    if f.type in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
        assert isinstance(v, (int, float)) and not isinstance(v, bool), (at, v)
    elif f.type in INTS:
        assert isinstance(v, int) and not isinstance(v, bool), (at, v)
    elif f.type == F.TYPE_BOOL:
        assert isinstance(v, bool), (at, v)
    elif f.type == F.TYPE_STRING:
        assert isinstance(v, str), (at, v)
    elif f.type == F.TYPE_BYTES:
        return base64.b64decode(v, validate=True)
    elif f.type == F.TYPE_ENUM:
        assert v in [e.number for e in f.enum_type.values], (at, v)
    return v


def fill(msg, d, at):
    assert isinstance(d, dict), (at, d)
    for k, v in d.items():
        f = msg.DESCRIPTOR.fields_by_name.get(k)
        assert f is not None, f"{at}.{k}: {msg.DESCRIPTOR.full_name} has no field {k}"
        here = f"{at}.{k}"
        if repeated(f):
            assert isinstance(v, list), (here, v)
            for i, x in enumerate(v):
                if f.type == F.TYPE_MESSAGE:
                    fill(getattr(msg, k).add(), value(f, x, f"{here}[{i}]"), f"{here}[{i}]")
                else:
                    getattr(msg, k).append(value(f, x, f"{here}[{i}]"))
        elif f.type == F.TYPE_MESSAGE:
            x = value(f, v, here)
            if f.message_type.full_name.startswith("google.protobuf."):
                sub = getattr(msg, k)
                sub.seconds, sub.nanos = x["seconds"], x["nanos"]
            else:
                fill(getattr(msg, k), x, here)
        else:
            setattr(msg, k, value(f, v, here))


made = {}
with open(sys.argv[2], "rb") as fh:
    r = make_reader(fh)
    for schema, channel, m in r.iter_messages():
        assert channel.message_encoding == "json" and schema.encoding == "jsonschema", channel
        cls = message_class(schema.name)
        pb = cls()
        fill(pb, json.loads(m.data), channel.topic)
        cls.FromString(pb.SerializeToString())
        made.setdefault(channel.topic, []).append((m.log_time, pb))

with AnyReader([Path(sys.argv[1])]) as r:
    conns = [c for c in r.connections if c.topic == "/imu_data"]
    source = [(t, r.deserialize(raw, c.msgtype)) for c, t, raw in r.messages(connections=conns)]

scene = made["/imu_scene"]
assert len(scene) == len(source) > 100, (len(scene), len(source))
for k, ((t0, imu), (t1, up)) in enumerate(zip(source, scene)):
    assert t0 == t1, (k, t0, t1)
    e = up.entities[0]
    assert e.id == f"imu{k + 1}" and e.frame_id == imu.header.frame_id, (k, e)
    # The script gave the time as seconds (a Lua float: ~0.25 us apart at today's times).
    assert abs(e.timestamp.seconds * 10**9 + e.timestamp.nanos - t0) <= 1000, (k, e.timestamp, t0)
    q, o = imu.orientation, e.cubes[0].pose.orientation
    assert (q.x, q.y, q.z, q.w) == (o.x, o.y, o.z, o.w), (k, q, o)
    assert (e.cubes[0].size.x, e.cubes[0].color.r, e.lifetime.seconds) == (0.5, 1.0, 1)
print(f"{len(scene)} SceneUpdates are Foxglove's")
