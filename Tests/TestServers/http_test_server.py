#!/usr/bin/env python3
"""Loopback helpers for ImageKit's downloader tests and benchmarks.

  http_test_server.py serve [ADDRESS]
      An HTTP/1.1 server on 127.0.0.1 or ADDRESS (such as ::1; the port printed
      on the first line of stdout)
      for what nginx will not do on purpose: slow first byte, slow body, a
      connection reset mid-body, a body shorter than its Content-Length, bytes
      past the Content-Length on a kept-alive connection, no Content-Length, hand-made chunking, redirects to file://, ftp:// and any
      URL (/redirect?to=URL),
      gated or held responses whose request counts and client aborts the tests
      read back from /stats, small PNG images behind a gate or a cookie, and a
      file served slowly in pieces (/trickle?path=FILE, held before it starts or
      mid-body, or cut mid-body).

  http_test_server.py supervise -- COMMAND...
      Runs COMMAND (nginx) and stops it when stdin closes, so a crashed test run
      leaves no server behind.

Both exit when stdin closes.
"""
import base64
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

LOCK = threading.Lock()
COUNTS = {}   # key -> requests seen
ABORTED = {}  # key -> True once the client went away before the body was complete
GATES = {}    # key -> threading.Event released by /open


def gate(key):
    with LOCK:
        return GATES.setdefault(key, threading.Event())


def pattern(n):
    """n deterministic bytes: byte i is i % 251."""
    block = bytes(i % 251 for i in range(251))
    return (block * (n // 251 + 1))[:n]


def png(width, height, seed=0):
    """A width x height opaque RGBA PNG with a deterministic pattern."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows += bytes(((x * 7 + seed) % 256, (y * 5 + seed) % 256, (x + y) % 256, 255))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(bytes(rows)))
            + chunk(b"IEND", b""))


def client_gone(sock, seconds):
    """Waits up to `seconds`; True as soon as the peer closes or resets the connection."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        readable, _, _ = select.select([sock], [], [], min(left, 0.05))
        if readable:
            try:
                if sock.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
            time.sleep(0.01)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urlparse(self.path)
        self.q = {k: v[0] for k, v in parse_qs(url.query).items()}
        name = url.path.strip("/").replace("-", "_")
        self.key = self.q.get("key", name)
        if name not in ("stats", "open"):
            with LOCK:
                COUNTS[self.key] = COUNTS.get(self.key, 0) + 1
        route = getattr(self, "route_" + name, None)
        if route is None:
            self.send_body(404, b"no such route\n", "text/plain")
        else:
            route()

    def num(self, name, default):
        return int(self.q.get(name, default))

    def head(self, status, length=None, ctype="application/octet-stream", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def send_body(self, status, body, ctype="application/octet-stream", extra=()):
        self.head(status, len(body), ctype, extra)
        if self.command != "HEAD":
            self.wfile.write(body)

    # ---- Well-behaved answers ----

    def route_bytes(self):
        self.send_body(200, pattern(self.num("n", 1000)))

    def route_echo(self):
        headers = {}
        for k, v in self.headers.items():
            headers.setdefault(k.lower(), []).append(v)
        self.send_body(200, json.dumps(headers).encode(), "application/json")

    def route_folded(self):
        # An obsolete folded field (RFC 9112 5.2): X-Folded's value goes on over a line that
        # starts with white space. Written by hand: send_header would not fold.
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Folded: first\r\n \t second\r\n"
                         b"X-Empty:\r\n\tfilled\r\nX-After: yes\r\nContent-Length: 3\r\n\r\nok\n")

    def route_html(self):
        self.send_body(200, b"<html><body>not an image</body></html>\n", "text/html; charset=utf-8")

    def route_cookie_set(self):
        self.send_body(200, b"ok\n", "text/plain", [("Set-Cookie", "session=s3cret; Path=/")])

    def route_auth(self):
        want = "Basic " + base64.b64encode(b"ann:pa55").decode()
        if self.headers.get("Authorization") == want:
            self.send_body(200, b"welcome\n", "text/plain")
        else:
            self.send_body(401, b"who are you\n", "text/plain", [("WWW-Authenticate", 'Basic realm="t"')])

    def route_no_length(self):
        self.close_connection = True
        self.head(200, None, extra=[("Connection", "close")])
        self.wfile.write(pattern(self.num("n", 5000)))

    def route_chunked(self):
        body = pattern(self.num("n", 5000))
        parts = max(1, self.num("chunks", 4))
        size = len(body) // parts + 1
        self.head(200, None, extra=[("Transfer-Encoding", "chunked")])
        for i in range(0, len(body), size):
            piece = body[i:i + size]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    # ---- Redirects nginx could make too, kept here beside the rest ----

    def route_redirect_file(self):
        self.send_body(302, b"", extra=[("Location", "file:///etc/passwd")])

    def route_redirect_ftp(self):
        self.send_body(302, b"", extra=[("Location", "ftp://127.0.0.1:21/image.png")])

    def route_redirect(self):
        self.send_body(302, b"", extra=[("Location", self.q["to"])])

    # ---- Misbehaving answers ----

    def route_slow_first_byte(self):
        if not client_gone(self.connection, self.num("ms", 5000) / 1000):
            self.send_body(200, pattern(1000))

    def route_slow_body(self):
        n, ms = self.num("n", 1000), self.num("ms", 200)
        self.head(200, n)
        self.wfile.flush()
        for b in pattern(n):
            if client_gone(self.connection, ms / 1000):
                return
            try:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
            except OSError:
                return

    def route_reset(self):
        n, sent = self.num("n", 100000), self.num("sent", 10000)
        self.head(200, n)
        self.wfile.write(pattern(sent))
        self.wfile.flush()
        time.sleep(0.05)
        # SO_LINGER with a zero timeout turns close() into a TCP reset.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def route_short(self):
        n, sent = self.num("n", 10000), self.num("sent", 5000)
        self.head(200, n)
        self.wfile.write(pattern(sent))
        self.wfile.flush()
        self.close_connection = True

    def route_overlong(self):
        # `n` bytes under a Content-Length of n, then, `ms` ms later on the kept-alive
        # connection, a whole second response nobody asked for: a client that reuses the
        # connection without reading what is waiting takes it for its next answer.
        n = self.num("n", 1000)
        self.head(200, n)
        self.wfile.write(pattern(n))
        self.wfile.flush()
        time.sleep(self.num("ms", 50) / 1000)
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"Content-Length: 9\r\n\r\nsmuggled!")
        self.wfile.flush()

    def route_bad_status(self):
        # A status line of the query's `line` ("HTTP/22 200 OK": libcurl reads status 2).
        line = self.q.get("line", "HTTP/22 200 OK")
        self.wfile.write(line.encode("latin-1") + b"\r\nContent-Length: 1\r\n\r\nx")
        self.wfile.flush()
        self.close_connection = True

    def route_trickle(self):
        # The file at `path`, `piece` bytes every `ms` ms (a body arriving slowly), or with `rate`
        # (bytes per second) paced to that rate from the first byte. With `hold`,
        # the body stops after that many bytes until /open?of=KEY; with `cut`, the connection
        # is reset after that many. With `start=1` the answer waits for /open?of=KEY-start before
        # its headers. A client that goes away is recorded in /stats.
        with open(self.q["path"], "rb") as f:
            body = f.read()
        if self.num("start", 0):
            gate(self.key + "-start").wait(30)
        piece, ms = max(1, self.num("piece", 4096)), self.num("ms", 5)
        hold, cut, rate = self.num("hold", -1), self.num("cut", -1), self.num("rate", 0)
        self.head(200, len(body), self.q.get("type", "application/octet-stream"))
        sent, held, start = 0, False, time.monotonic()
        while sent < len(body):
            if cut >= 0 and sent >= cut:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if hold >= 0 and sent >= hold and not held:
                held = True
                gate(self.key).wait(30)
            end = min(len(body), sent + piece)
            if cut >= 0:
                end = min(end, max(cut, sent + 1))
            if hold >= 0 and not held:
                end = min(end, max(hold, sent + 1))
            try:
                self.wfile.write(body[sent:end])
                self.wfile.flush()
            except OSError:
                with LOCK:
                    ABORTED[self.key] = True
                return
            sent = end
            wait = start + sent / rate - time.monotonic() if rate > 0 else ms / 1000
            if sent < len(body) and client_gone(self.connection, max(0, wait)):
                with LOCK:
                    ABORTED[self.key] = True
                return

    # ---- Gated and held answers, for coalescing and cancellation ----

    def route_gate(self):
        gate(self.key).wait(30)
        self.send_body(200, pattern(self.num("n", 20000)))

    def route_hold(self):
        n = self.num("n", 1000000)
        self.head(200, n)
        self.wfile.write(pattern(1000))
        self.wfile.flush()
        gone = client_gone(self.connection, 30)
        with LOCK:
            ABORTED[self.key] = gone
        self.close_connection = True

    def route_gate_png(self):
        gate(self.key).wait(30)
        self.send_body(200, png(self.num("w", 16), self.num("h", 12), self.num("seed", 0)), "image/png")

    def route_cookie_png(self):
        if "session=s3cret" in (self.headers.get("Cookie") or ""):
            self.send_body(200, png(8, 8), "image/png")
        else:
            self.send_body(403, b"no session\n", "text/plain")

    def route_open(self):
        gate(self.q["of"]).set()
        self.send_body(200, b"open\n", "text/plain")

    def route_stats(self):
        key = self.q["of"]
        with LOCK:
            body = json.dumps({"count": COUNTS.get(key, 0), "aborted": ABORTED.get(key, False)})
        self.send_body(200, body.encode(), "application/json")


def exit_when_stdin_closes(on_exit):
    def watch():
        while os.read(0, 4096):
            pass
        on_exit()
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


class IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def serve(address):
    server = (IPv6Server if ":" in address else ThreadingHTTPServer)((address, 0), Handler)
    server.daemon_threads = True
    exit_when_stdin_closes(lambda: None)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def supervise(command):
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)

    def stop():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    exit_when_stdin_closes(stop)
    print(child.pid, flush=True)
    sys.exit(child.wait())


if __name__ == "__main__":
    if len(sys.argv) in (2, 3) and sys.argv[1] == "serve":
        serve(sys.argv[2] if len(sys.argv) == 3 else "127.0.0.1")
    elif len(sys.argv) >= 4 and sys.argv[1] == "supervise" and sys.argv[2] == "--":
        supervise(sys.argv[3:])
    else:
        sys.exit(__doc__)
