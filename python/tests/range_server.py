"""An HTTP server on 127.0.0.1 that serves a directory with Range support (RFC 9110 single
ranges), an ETag and Last-Modified per file, and what a test needs to see and break it: a
count of requests per method and path, added latency, answers of 500 and connections dropped
mid-body on demand.

Run on its own (`python3 range_server.py DIR [--latency-ms N] [--port P]`) it serves until
killed and prints its URL: what `scripts/bench/remote.py` uses.
"""

from __future__ import annotations

import argparse
import email.utils
import hashlib
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class State:
    def __init__(self, root: Path, latency_s: float = 0.0):
        self.root = root
        self.latency_s = latency_s
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, str]] = []  # (method, path, range)
        # Faults: how many of the next GETs answer 500 / drop the connection mid-body.
        self.fail_500 = 0
        self.drop = 0
        self.bytes_sent = 0

    def reset(self):
        with self.lock:
            self.requests.clear()

    def count(self, method: str | None = None) -> int:
        with self.lock:
            return sum(1 for r in self.requests if method is None or r[0] == method)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State

    def log_message(self, *args):  # quiet
        pass

    def _file(self) -> Path | None:
        rel = self.path.split("?", 1)[0].lstrip("/")
        p = (self.state.root / rel).resolve()
        root = self.state.root.resolve()
        if root not in p.parents and p != root:
            return None
        return p if p.is_file() else None

    def _serve(self, body: bool):
        st = self.state
        with st.lock:
            st.requests.append((self.command, self.path, self.headers.get("Range", "")))
            fail = st.fail_500 > 0 and body
            if fail:
                st.fail_500 -= 1
            drop = st.drop > 0 and body and not fail
            if drop:
                st.drop -= 1
        if st.latency_s:
            time.sleep(st.latency_s)
        if fail:
            msg = b"injected failure"
            self.send_response(500)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        p = self._file()
        if p is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        stat = p.stat()
        size = stat.st_size
        etag = '"%s"' % hashlib.md5(f"{p}:{size}:{stat.st_mtime_ns}".encode()).hexdigest()
        start, end = 0, size - 1
        status = 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            if a == "":
                start, end = max(size - int(b), 0), size - 1
            else:
                start = int(a)
                end = min(int(b), size - 1) if b else size - 1
            if start >= size or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        n = end - start + 1
        self.send_response(status)
        self.send_header("Content-Length", str(n))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if not body:
            return
        with st.lock:
            st.bytes_sent += n
        with open(p, "rb") as f:
            f.seek(start)
            left = n
            if drop:
                # Half the body, then the connection goes away.
                self.wfile.write(f.read(max(n // 2, 1) if n > 1 else 0))
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            while left:
                b = f.read(min(left, 1 << 20))
                if not b:
                    break
                self.wfile.write(b)
                left -= len(b)

    def do_GET(self):
        self._serve(True)

    def do_HEAD(self):
        self._serve(False)


def start(root: Path, latency_s: float = 0.0, port: int = 0):
    """Starts the server on a thread: (server, state, base URL)."""
    state = State(Path(root), latency_s)
    handler = type("H", (Handler,), {"state": state})
    srv = ThreadingHTTPServer(("127.0.0.1", port), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, state, f"http://127.0.0.1:{srv.server_address[1]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("root")
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    srv, state, url = start(Path(a.root), a.latency_ms / 1000, a.port)
    print(url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
