#!/usr/bin/env python3
"""Draws crates/bagscope-app/assets/icon.png (128x128), the window icon: the app in miniature, timeline rows of
message density in the topic colours and a red playhead. Pure Python (zlib), no image library.

Usage: python3 scripts/data/icon.py
"""
import math
import struct
import zlib
from pathlib import Path

N = 128
OUT = Path(__file__).resolve().parents[2] / 'crates' / 'bagscope-app' / 'assets' / 'icon.png'
ROWS = [(240, 128, 128), (140, 180, 250), (200, 230, 150), (240, 160, 230), (150, 230, 230)]


def pixel(x: int, y: int) -> tuple:
    # A rounded dark square.
    r, m = 22, 4
    cx = min(max(x, m + r), N - 1 - m - r)
    cy = min(max(y, m + r), N - 1 - m - r)
    if (x - cx) ** 2 + (y - cy) ** 2 > r * r or not (m <= x < N - m and m <= y < N - m):
        return (0, 0, 0, 0)
    # The playhead, over the rows.
    if 74 <= x < 78 and 12 <= y < N - 14:
        return (255, 90, 70, 255)
    # Five rows of density bars.
    top, h, gap = 20, 14, 5
    for i, c in enumerate(ROWS):
        y0 = top + i * (h + gap)
        if y0 <= y < y0 + h and 16 <= x < N - 16:
            dens = 0.55 + 0.45 * math.sin(x * (0.21 + 0.07 * i) + i * 1.7)
            bar = h * dens
            if (x + i) % 3 != 0 and y >= y0 + h - bar:
                return (*c, 255)
            return (44, 46, 52, 255)
    return (30, 31, 36, 255)


def main() -> None:
    raw = b''.join(b'\x00' + b''.join(bytes(pixel(x, y)) for x in range(N)) for y in range(N))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))

    png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', N, N, 8, 6, 0, 0, 0))
    png += chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_bytes(png)
    print(f'wrote {OUT} ({len(png)} bytes)')


if __name__ == '__main__':
    main()
