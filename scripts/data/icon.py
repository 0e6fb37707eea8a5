#!/usr/bin/env python3
"""Draws crates/bagscope-app/assets/icon.png (128x128), the window icon: the app in miniature, timeline rows of
message density in the topic colours and a red playhead. Pure Python (zlib), no image library.

The desktop packages' icons (packaging/linux/icons/hicolor/SIZE/apps/bagscope.png, at the sizes
desktops look for) are the same drawing sampled at each size (4x4 samples a pixel).

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


ICONS = Path(__file__).resolve().parents[2] / 'packaging' / 'linux' / 'icons' / 'hicolor'
SIZES = [16, 24, 32, 48, 64, 128, 256]


def sampled(x: int, y: int, size: int) -> tuple:
    """The drawing's pixel (x, y) at `size`: the mean of 4x4 samples of the 128 drawing."""
    acc = [0, 0, 0, 0]
    for i in range(4):
        for j in range(4):
            p = pixel(min(N - 1, int((x + (i + 0.5) / 4) * N / size)),
                      min(N - 1, int((y + (j + 0.5) / 4) * N / size)))
            acc = [a + b * p[3] if k < 3 else a + b for k, (a, b) in enumerate(zip(acc, p))]
    alpha = acc[3] / 16
    return tuple(round(c / acc[3]) if acc[3] else 0 for c in acc[:3]) + (round(alpha),)


def png_of(size: int, px) -> bytes:
    raw = b''.join(b'\x00' + b''.join(bytes(px(x, y)) for x in range(size)) for y in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))

    png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', size, size, 8, 6, 0, 0, 0))
    return png + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')


def main() -> None:
    png = png_of(N, pixel)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_bytes(png)
    print(f'wrote {OUT} ({len(png)} bytes)')
    for size in SIZES:
        out = ICONS / f'{size}x{size}' / 'apps' / 'bagscope.png'
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(png if size == N else png_of(size, lambda x, y: sampled(x, y, size)))
        print(f'wrote {out}')


if __name__ == '__main__':
    main()
