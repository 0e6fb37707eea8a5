"""Map tiles made for the map panel's tests, whose pixels say where they are: pixel (px, py)
of tile z/x/y is (R, G, B) = (px, py, (x % 16) * 16 + y % 16). Written as a folder of PNG files, a
PMTiles archive (PyPI `pmtiles`' writer), and served over HTTP on 127.0.0.1, well or badly.

    python3 map_tiles.py folder DIR Z WEST SOUTH EAST NORTH
    python3 map_tiles.py pmtiles FILE Z WEST SOUTH EAST NORTH
    python3 map_tiles.py serve DIR MODE        MODE: ok | stall | refuse | truncated
    python3 map_tiles.py expect Z LAT,LON...   the tile and pixel mercantile puts each at

`serve` prints its port, then serves until killed.
"""

import io
import json
import struct
import sys
import zlib
from pathlib import Path

import mercantile


def png(x, y):
    """A 256x256 RGB PNG whose pixels say where they are (zlib, no Pillow needed)."""
    code = (x % 16) * 16 + y % 16
    rows = []
    for py in range(256):
        row = bytearray([0])
        for px in range(256):
            row += bytes((px, py, code))
        rows.append(bytes(row))
    raw = zlib.compress(b"".join(rows), 6)

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def tiles(z, west, south, east, north):
    return list(mercantile.tiles(west, south, east, north, [z]))


def main():
    cmd = sys.argv[1]
    if cmd == "folder":
        out, z = Path(sys.argv[2]), int(sys.argv[3])
        for t in tiles(z, *map(float, sys.argv[4:8])):
            p = out / str(t.z) / str(t.x) / f"{t.y}.png"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(png(t.x, t.y))
    elif cmd == "pmtiles":
        from pmtiles.tile import Compression, TileType, zxy_to_tileid
        from pmtiles.writer import Writer

        out, z = sys.argv[2], int(sys.argv[3])
        bbox = list(map(float, sys.argv[4:8]))
        with open(out, "wb") as f:
            w = Writer(f)
            ts = sorted(tiles(z, *bbox), key=lambda t: zxy_to_tileid(t.z, t.x, t.y))
            for t in ts:
                w.write_tile(zxy_to_tileid(t.z, t.x, t.y), png(t.x, t.y))
            w.finalize(
                {
                    "tile_type": TileType.PNG,
                    "tile_compression": Compression.NONE,
                    "min_zoom": z,
                    "max_zoom": z,
                    "min_lon_e7": int(bbox[0] * 1e7),
                    "min_lat_e7": int(bbox[1] * 1e7),
                    "max_lon_e7": int(bbox[2] * 1e7),
                    "max_lat_e7": int(bbox[3] * 1e7),
                    "center_zoom": z,
                    "center_lon_e7": int((bbox[0] + bbox[2]) / 2 * 1e7),
                    "center_lat_e7": int((bbox[1] + bbox[3]) / 2 * 1e7),
                },
                {"attribution": "bagscope test tiles"},
            )
    elif cmd == "serve":
        import http.server
        import threading
        import time

        root, mode = Path(sys.argv[2]), sys.argv[3]

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                agents = root / "user-agents.txt"
                with open(agents, "a") as f:
                    f.write(self.headers.get("User-Agent", "") + "\n")
                if mode == "stall":
                    time.sleep(3600)
                    return
                if mode == "refuse":
                    self.send_error(500, "refused")
                    return
                p = root / self.path.lstrip("/")
                if not p.is_file():
                    self.send_error(404)
                    return
                body = p.read_bytes()
                if mode == "truncated":
                    body = body[: len(body) // 3]
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        s.daemon_threads = True
        print(s.server_address[1], flush=True)
        s.serve_forever()
    elif cmd == "expect":
        z = int(sys.argv[2])
        out = []
        for ll in sys.argv[3:]:
            lat, lon = map(float, ll.split(","))
            t = mercantile.tile(lon, lat, z)
            b = mercantile.xy_bounds(t)
            x, y = mercantile.xy(lon, lat)
            px = (x - b.left) / (b.right - b.left) * 256
            py = (b.top - y) / (b.top - b.bottom) * 256
            out.append({"x": t.x, "y": t.y, "px": px, "py": py})
        print(json.dumps(out))


main()
