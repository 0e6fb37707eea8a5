#!/usr/bin/env python3
"""Seeds for the fuzz targets: fuzz/corpus/open_iterate from the small bags of ../shared/bags,
fuzz/corpus/decode from a few definitions and messages, fuzz/corpus/decode_bz2 from bz2 streams.

Usage: python3 scripts/data/fuzz_seeds.py   (from the repository; corpora are kept out of git)
open_iterate's first byte selects the magic line it prepends (0: 1.2, 1 or 2: 2.0, 3: none), so a
bag's own magic line is replaced by that byte.
"""
import glob
import hashlib
import os
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BAGS = ROOT.parent / 'shared' / 'bags'
BAGS2 = ROOT.parent / 'shared' / 'bags2'


def put(kind: str, seed: bytes) -> None:
    d = ROOT / 'fuzz' / 'corpus' / kind
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(seed).hexdigest()).write_bytes(seed)


def main() -> None:
    n = 0
    for p in sorted(glob.glob(str(BAGS / '**' / '*'), recursive=True)):
        if not os.path.isfile(p) or os.path.getsize(p) > 65536:
            continue
        b = Path(p).read_bytes()
        if b.startswith(b'#ROSBAG V2.0\n'):
            put('open_iterate', b'\x01' + b[13:])
        elif b.startswith(b'#ROSRECORD V1.2\n'):
            put('open_iterate', b'\x00' + b[16:])
        else:
            put('open_iterate', b'\x03' + b)
        n += 1
    defs = [
        'float64 data',
        'Header header\nfloat64[] xs\nstring s\nP[2] ps\n================\nMSG: std_msgs/Header\n'
        'uint32 seq\ntime stamp\nstring frame_id\n================\nMSG: a/P\nint32 a\nduration d\nuint8[] raw\n',
        'int32 X=3\nstring S=a#b\nbyte b\nchar c\nbool f\nuint8[4] q\ntime t\n',
    ]
    for d in defs:
        for msg in [b'', struct.pack('<d', 1.5), bytes(range(64))]:
            put('decode', d.encode() + b'\0' + msg)
    # MCAP: the conformance suite and the small standalone files, magic stripped (the target
    # prepends it).
    m = 0
    for p in sorted(glob.glob(str(BAGS2 / '**' / '*.mcap'), recursive=True)):
        b = Path(p).read_bytes()
        if len(b) <= 65536 and b.startswith(b'\x89MCAP0\r\n'):
            put('open_mcap', b[8:])
            m += 1
    # CDR: every stored ros2msg definition of the small rosbag2 MCAPs is too much; a few
    # hand-written ones with alignment cases, and messages of both byte orders.
    cdr_defs = [
        'int8 a\nfloat64 b\nstring s\nint32[<=3] v\nstring<=5 t\nuint16[2] f\nint32 d 5\n',
        'builtin_interfaces/Time stamp\nstring frame_id\n' + '=' * 80 + '\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n',
        'P[] ps\nbyte[3] b\nbool[] f\n' + '=' * 80 + '\nMSG: fuzz/P\nfloat32 x\nfloat64 y\n',
    ]
    for d in cdr_defs:
        for msg in [b'\0\x01\0\0', b'\0\x01\0\0' + bytes(range(48)), b'\0\0\0\0' + bytes(range(48))]:
            put('decode_cdr', d.encode() + b'\0' + msg)
    # rosbag2: metadata.yaml and the .db3 of the small SQLite bags.
    r = 0
    for meta in sorted(glob.glob(str(BAGS2 / 'rosbag2' / '**' / 'metadata.yaml'), recursive=True)):
        dbs = sorted(glob.glob(str(Path(meta).parent / '*.db3')))
        if dbs and os.path.getsize(dbs[0]) <= 65536:
            put('open_rosbag2', Path(meta).read_bytes() + b'\0' + Path(dbs[0]).read_bytes())
            r += 1
    # ROS 1 before 1.2: the start of the two real files (the scan recovers a cut file), their
    # magic line replaced by open_old's selector byte, and a version 0 file.
    o = 0
    for name in ['ekf_test.bag', 'monster.bag']:
        p = BAGS / 'old-formats' / name
        if not p.exists():
            continue
        b = p.read_bytes()
        line, _, rest = b.partition(b'\n')
        sel = {b'#ROSRECORD V1.1': 0, b'#ROSLOG V1.1': 1, b'#ROSLOG V1.0': 2}.get(line)
        if sel is None:
            continue
        for cut in [4096, 16384, 65536]:
            put('open_old', bytes([sel]) + rest[:cut])
            o += 1
    v0 = b'/chatter\nstd_msgs/String\n*\n'
    for i, text in enumerate([b'hello', b'world']):
        data = struct.pack('<I', len(text)) + text
        v0 += struct.pack('<III', i + 1, 500, len(data)) + data
    put('open_old', b'\x03' + v0)
    o += 1
    # Protobuf and JSON: schemas and messages of keelson, lichtblick and the protobuf fixture
    # of tests/py/protobuf_fixture.py (when Google's protobuf is installed).
    e = 0
    try:
        import subprocess
        import tempfile
        from mcap.reader import make_reader
        files = [BAGS2 / 'keelson' / 'test.mcap', BAGS2 / 'lichtblick' / 'example.mcap']
        tmp = Path(tempfile.mkdtemp()) / 'all.mcap'
        if subprocess.run(['python3', str(ROOT / 'tests' / 'py' / 'protobuf_fixture.py'), str(tmp)]).returncode == 0:
            files.append(tmp)
        for f in files:
            with open(f, 'rb') as fh:
                for k, (schema, _c, msg) in enumerate(make_reader(fh).iter_messages()):
                    if k >= 12:
                        break
                    if schema.encoding == 'protobuf':
                        put('decode_mcap_encodings', b'\0' + struct.pack('<H', len(schema.data)) + schema.data + msg.data)
                    else:
                        put('decode_mcap_encodings', b'\1' + schema.data + b'\0' + msg.data)
                    e += 1
    except ImportError:
        pass
    # IDL: the schemas and messages of tests/py/idl_fixture.py (rosidl's ros2idl, eProsima's
    # omgidl, a type without a package), and hand-written schemas of what rosbags' IDL reader
    # does not take (enums, annotations, multidimensional arrays), as tests/corpus/idl.rs has them.
    i = 0
    try:
        import subprocess
        import tempfile
        from mcap.reader import make_reader
        tmp = Path(tempfile.mkdtemp())
        if subprocess.run(['python3', str(ROOT / 'tests' / 'py' / 'idl_fixture.py'),
                           str(tmp / 'idl.mcap'), str(tmp / 'idl.jsonl')]).returncode == 0:
            with open(tmp / 'idl.mcap', 'rb') as fh:
                for schema, _c, msg in make_reader(fh).iter_messages():
                    put('parse_idl', schema.name.encode() + b'\n' + schema.data + b'\0' + msg.data)
                    i += 1
    except ImportError:
        pass
    hand = [
        ('robot::State', 'module robot {\n  @bit_bound(8) enum Level { @value(10) LOW, HIGH };\n'
         '  enum Mode { IDLE, RUN = 7, STOP };\n  typedef long Grid[2][3];\n  @appendable\n'
         '  struct State {\n    @key unsigned short id;\n    Mode mode;\n    Level level;\n'
         '    Grid grid;\n    double speed;\n  };\n};\n',
         b'\0\x01\0\0' + bytes(range(48))),
        ('a::B', 'module a { const long N = 2 * 3 + (1 << 2); struct C { string<N> s; };\n'
         ' struct B : C { sequence<sequence<long>> bad; }; };', b'\0\x07\0\0' + bytes(16)),
        ('std_msgs/msg/Empty', 'module std_msgs { module msg { struct Empty {\n'
         ' uint8 structure_needs_at_least_one_member; }; }; };', b'\0\x01\0\0\0'),
    ]
    for name, text, msg in hand:
        put('parse_idl', name.encode() + b'\n' + text.encode() + b'\0' + msg)
        i += 1
    # decode_bz2: bz2 streams of runs, text, every byte value and random bytes, at block sizes
    # 1 (several blocks) and 9.
    import bz2
    import random
    rng = random.Random(7)
    z = 0
    samples = [b'', b'a', b'aaaa', b'aaaaa' * 60, bytes(range(256)) * 4,
               b''.join(bytes([k % 7]) * (k % 300) for k in range(700)),
               bytes(rng.getrandbits(8) for _ in range(3000)),
               bytes(rng.choice(b'aab\x00\xff') for _ in range(130000))]
    for sample in samples:
        for level in (1, 9):
            put('decode_bz2', bz2.compress(sample, level))
            z += 1
    print(f'{n} bag seeds, {len(defs) * 3} decode seeds, {m} MCAP seeds, '
          f'{len(cdr_defs) * 3} CDR seeds, {r} rosbag2 seeds, {o} old-format seeds, '
          f'{e} protobuf/JSON seeds, {i} IDL seeds, {z} bz2 seeds')


if __name__ == '__main__':
    main()
