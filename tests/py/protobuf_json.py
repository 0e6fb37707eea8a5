#!/usr/bin/env python3
"""Every protobuf message of an MCAP file decoded by Google's protobuf library from the
schema's FileDescriptorSet, one JSON object a line: {"topic", "time_ns", "message"}.
Fields as they are (no special form for well-known types), bytes as base64, enums as numbers,
64-bit integers as numbers, a sub-message the message does not carry as {}, a map as a list of
{"key", "value"} sorted by key: what `bagscope echo --json` is compared with
(tests/corpus/encodings.rs).

Usage: python3 tests/py/protobuf_json.py FILE.mcap
"""
import base64
import json
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from mcap.reader import make_reader


def plain(msg):
    out = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            vf = f.message_type.fields_by_name['value']
            out[f.name] = [{'key': k, 'value': one(vf, v[k])} for k in sorted(v)]
        elif f.label == FieldDescriptor.LABEL_REPEATED:
            out[f.name] = [one(f, x) for x in v]
        elif f.type == FieldDescriptor.TYPE_MESSAGE and not msg.HasField(f.name):
            out[f.name] = {}
        else:
            out[f.name] = one(f, v)
    return out


def one(f, v):
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        return plain(v)
    if f.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(v).decode()
    return v


def main():
    classes = {}
    with open(sys.argv[1], 'rb') as fh:
        for schema, channel, m in make_reader(fh).iter_messages():
            if channel.message_encoding != 'protobuf':
                continue
            key = schema.id
            if key not in classes:
                fds = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
                pool = descriptor_pool.DescriptorPool()
                for fd in fds.file:
                    pool.Add(fd)
                classes[key] = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
            msg = classes[key].FromString(m.data)
            print(json.dumps({'topic': channel.topic, 'time_ns': m.log_time, 'message': plain(msg)}))


if __name__ == '__main__':
    main()
