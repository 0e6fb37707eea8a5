#!/usr/bin/env python3
"""Writes an MCAP file of protobuf messages that use every scalar kind, enums, nested and
repeated messages, packed and unpacked numbers, a map, a proto3 optional and a oneof, built
with Google's protobuf library (the schema made in code as a FileDescriptorProto) and the mcap
package's writer; tests/corpus/encodings.rs decodes it with bagscope and with protobuf_json.py.

Usage: python3 tests/py/protobuf_fixture.py OUT.mcap [--relative]

With --relative, field type names are written relative to their scope, as protobufjs writes
them (`Mode`, `CountsEntry`, `bagscope.test.Inner`, `test.Inner`), which descriptor.proto
allows; Google's library resolves them by protobuf's scoping when it builds the classes.
"""
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from mcap.writer import Writer

F = descriptor_pb2.FieldDescriptorProto


RELATIVE = {
    'mode': 'Mode',
    'inner': 'Inner',
    'inners': 'bagscope.test.Inner',
    'counts': 'CountsEntry',
    'c_inner': 'test.Inner',
}


def build(relative=False):
    fd = descriptor_pb2.FileDescriptorProto(name='bagscope_test.proto', package='bagscope.test',
                                            syntax='proto3')
    mode = fd.enum_type.add(name='Mode')
    for i, n in enumerate(['MODE_UNKNOWN', 'MODE_AUTO', 'MODE_MANUAL']):
        mode.value.add(name=n, number=i)
    inner = fd.message_type.add(name='Inner')
    inner.field.add(name='x', number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    inner.field.add(name='ys', number=2, type=F.TYPE_FLOAT, label=F.LABEL_REPEATED)
    inner.field.add(name='note', number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m = fd.message_type.add(name='All')
    scalars = [('d', 1, F.TYPE_DOUBLE), ('f', 2, F.TYPE_FLOAT), ('i64', 3, F.TYPE_INT64),
               ('u64', 4, F.TYPE_UINT64), ('i32', 5, F.TYPE_INT32), ('fx64', 6, F.TYPE_FIXED64),
               ('fx32', 7, F.TYPE_FIXED32), ('b', 8, F.TYPE_BOOL), ('s', 9, F.TYPE_STRING),
               ('by', 12, F.TYPE_BYTES), ('u32', 13, F.TYPE_UINT32), ('sf32', 15, F.TYPE_SFIXED32),
               ('sf64', 16, F.TYPE_SFIXED64), ('si32', 17, F.TYPE_SINT32), ('si64', 18, F.TYPE_SINT64)]
    for name, num, ty in scalars:
        m.field.add(name=name, number=num, type=ty, label=F.LABEL_OPTIONAL)
    m.field.add(name='mode', number=14, type=F.TYPE_ENUM, type_name='.bagscope.test.Mode',
                label=F.LABEL_OPTIONAL)
    m.field.add(name='inner', number=20, type=F.TYPE_MESSAGE, type_name='.bagscope.test.Inner',
                label=F.LABEL_OPTIONAL)
    m.field.add(name='inners', number=21, type=F.TYPE_MESSAGE, type_name='.bagscope.test.Inner',
                label=F.LABEL_REPEATED)
    m.field.add(name='packed_i32', number=22, type=F.TYPE_INT32, label=F.LABEL_REPEATED)
    un = m.field.add(name='unpacked_si64', number=23, type=F.TYPE_SINT64, label=F.LABEL_REPEATED)
    un.options.packed = False
    m.field.add(name='names', number=24, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    entry = m.nested_type.add(name='CountsEntry')
    entry.options.map_entry = True
    entry.field.add(name='key', number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name='value', number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m.field.add(name='counts', number=25, type=F.TYPE_MESSAGE,
                type_name='.bagscope.test.All.CountsEntry', label=F.LABEL_REPEATED)
    m.oneof_decl.add(name='choice')
    m.field.add(name='c_text', number=27, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL,
                oneof_index=0)
    m.field.add(name='c_inner', number=28, type=F.TYPE_MESSAGE,
                type_name='.bagscope.test.Inner', label=F.LABEL_OPTIONAL, oneof_index=0)
    m.oneof_decl.add(name='_opt')
    m.field.add(name='opt', number=26, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL, oneof_index=1,
                proto3_optional=True)
    if relative:
        for f in m.field:
            if f.name in RELATIVE:
                f.type_name = RELATIVE[f.name]
    fds = descriptor_pb2.FileDescriptorSet(file=[fd])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName('bagscope.test.All'))
    return fds, cls


def messages(cls):
    out = []
    for k in range(40):
        a = cls()
        if k % 5 != 4:  # every fifth message is left empty: every field at its default
            a.d = k * 1.25 - 20
            a.f = k * 0.1
            a.i64 = -(k ** 9)
            a.u64 = 2 ** 64 - 1 - k
            a.i32 = -5 * k  # negative int32: a 10-byte varint
            a.fx64 = k * 1_000_000_007
            a.fx32 = k * 97
            a.b = k % 2 == 1
            a.s = f'message {k} · ü'
            a.by = bytes(range(k % 7))
            a.u32 = 4_000_000_000 - k
            a.mode = k % 3
            a.sf32 = -k * 1000
            a.sf64 = -k * 10 ** 12
            a.si32 = -k if k % 2 else k
            a.si64 = -(k ** 7)
            a.inner.x = k / 3
            a.inner.ys.extend([k, -k, 0.5])
            a.inner.note = 'inner'
            for j in range(k % 3):
                a.inners.add(x=j, ys=[j], note=f'{j}')
            a.packed_i32.extend([k, -1, 300, -300000])
            a.unpacked_si64.extend([-k, k * 2])
            a.names.extend(['a', '', 'ccc'][: k % 4])
            a.counts['one'] = k
            a.counts['two'] = -k
            if k % 2:
                a.opt = 0  # present, though the default: proto3 optional
            if k % 3 == 1:
                a.c_text = 'text'
            elif k % 3 == 2:
                a.c_inner.x = 2.5
        out.append(a)
    return out


def main():
    fds, cls = build(relative='--relative' in sys.argv[2:])
    with open(sys.argv[1], 'wb') as fh:
        w = Writer(fh)
        w.start('', 'bagscope test')
        sid = w.register_schema('bagscope.test.All', 'protobuf', fds.SerializeToString())
        cid = w.register_channel('/all', 'protobuf', sid)
        for k, a in enumerate(messages(cls)):
            t = 1_000_000_000 + k * 10_000_000
            w.add_message(cid, log_time=t, publish_time=t, data=a.SerializeToString(), sequence=k)
        w.finish()


if __name__ == '__main__':
    main()
