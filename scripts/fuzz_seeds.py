#!/usr/bin/env python3
"""Seeds for the fuzz targets: fuzz/corpus/open_iterate from the small bags of ../shared/bags,
fuzz/corpus/decode from a few definitions and messages.

Usage: python3 scripts/fuzz_seeds.py   (from the repository; corpora are kept out of git)
open_iterate's first byte selects the magic line it prepends (0: 1.2, 1 or 2: 2.0, 3: none), so a
bag's own magic line is replaced by that byte.
"""
import glob
import hashlib
import os
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BAGS = ROOT.parent / 'shared' / 'bags'


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
    print(f'{n} bag seeds, {len(defs) * 3} decode seeds')


if __name__ == '__main__':
    main()
