#!/usr/bin/env python3
"""Load benchmark of two HTTP thumbnail servers, one at a time (`make bench-service`).

ImageKit's Examples/ThumbnailServer against its peer, Benchmarks/Peers'
peer-thumbnail-server (Hummingbird + AsyncHTTPClient + libvips). Both answer
GET /thumb/NAME?w=N by downloading ORIGIN/NAME from nginx on 127.0.0.1 and
returning a JPEG (quality 80) that fits in N x N px.

Inputs: photo-like JPEGs generated once into .build/bench-service/origin/ (numpy
writes the pixels, cjpeg encodes): 400 for COLD, and as many new ones as MIXED
needs for its cold requests (200 at the defaults, 600 files in all).

Each server is built in release, started fresh with an empty cache directory,
and put through three workloads in order:
  COLD   every one of the 400 names once, 8 requests in flight (closed loop);
  WARM   20 hot names, wrk with 16 connections and 2 threads for WARM_SECONDS;
  MIXED  a fixed rate (MIXED_RATE req/s) for MIXED_SECONDS: 80 % to 40 hot names,
         20 % to names never requested before, evenly spread (open loop: latency
         counts from each request's scheduled start).
Then SIGTERM, and it must exit within 10 s.

On these 2 shared cores one run of each server moves by 10-20 %, so the whole
sequence is repeated ROUNDS times (3 by default), the servers alternating which goes
first; each figure is the median over the rounds (counts of errors are summed, the
stop time is the worst), and the per-round ratios of the targets are printed too.

Prints a side-by-side table, writes bench-results/service.json, and when both
servers ran, replaces this section's records in bench-results/results.jsonl and
runs scripts/bench_report.py. Exits 1 when a requested server did not build or
start, or its run failed.
"""
import argparse
import asyncio
import collections
import ctypes
import json
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, ".build", "bench-service")
ORIGIN = os.path.join(WORK, "origin")
RESULTS = os.path.join(ROOT, "bench-results")
SECTION = "service (400 JPEGs → 256 px)"

COLD_COUNT = 400
COLD_IN_FLIGHT = 8
WIDTH = 256
WARM_HOT = 20
MIXED_HOT = 40
MIXED_COLD_SHARE = 0.2
REQUEST_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10

# The servers: how each is built and the name of its executable.
SERVERS = {
    "imagekit": {
        "label": "ImageKit",
        "package": "Examples/ThumbnailServer",
        "build": [],
        "executable": "thumbnail-server",
    },
    "peer": {
        "label": "peer",
        "package": "Benchmarks/Peers",
        "build": ["--product", "peer-thumbnail-server"],
        "executable": "peer-thumbnail-server",
    },
}
PEER_DESCRIPTION = "Hummingbird+AsyncHTTPClient+libvips"


def log(message):
    print(message, flush=True)


# ---------------------------------------------------------------------------
# Inputs

def photo(rng, width, height):
    """Photo-like RGB pixels: a smooth colour field, soft shapes, texture and grain.

    The noise is stronger in small images so that files run from ~0.5 MB at 1.4 MP
    to ~3 MB at 16 MP (quality 85-90), like photos from cameras of either size.
    """
    def hat_weights(n, knots):
        # n x knots linear-interpolation weights: the field is a bilinear upsampling of
        # a small random grid, as two matrix products per colour plane.
        pos = np.linspace(0, knots - 1, n, dtype=np.float32)[:, None]
        return np.maximum(0, 1 - np.abs(pos - np.arange(knots, dtype=np.float32)[None, :]))

    gy, gx = rng.integers(3, 8), rng.integers(3, 8)
    grid = rng.uniform(20, 235, size=(3, gy, gx)).astype(np.float32)
    img = (hat_weights(height, gy) @ grid) @ hat_weights(width, gx).T  # 3 planes, height x width
    for _ in range(rng.integers(8, 20)):
        w, h = int(rng.uniform(0.05, 0.35) * width), int(rng.uniform(0.05, 0.35) * height)
        x, y = int(rng.uniform(0, width - w)), int(rng.uniform(0, height - h))
        colour = rng.uniform(0, 255, 3).astype(np.float32)[:, None, None]
        alpha = np.float32(rng.uniform(0.4, 0.9))
        patch = img[:, y:y + h, x:x + w]
        if rng.random() < 0.6:  # a shaded ellipse
            r2 = (np.linspace(-1, 1, h, dtype=np.float32)[:, None] ** 2
                  + np.linspace(-1, 1, w, dtype=np.float32)[None, :] ** 2)
            mask = alpha * (r2 < 1) * (1 - 0.5 * r2)
        else:  # a rectangle with a horizontal ramp
            mask = alpha * np.linspace(0.6, 1, w, dtype=np.float32)[None, :]
        patch += (colour - patch) * mask
    small = np.clip(np.log(16e6 / (width * height)) / np.log(16 / 1.44), 0, 1)
    texture = np.float32((4.5 + 6.5 * small) * rng.uniform(0.85, 1.15))
    # Luminance noise: texture at half resolution plus per-pixel grain at half its strength.
    noise = rng.standard_normal((height // 2 + 1, width // 2 + 1), dtype=np.float32) * texture
    noise = np.repeat(np.repeat(noise, 2, 0), 2, 1)[:height, :width]
    noise += rng.standard_normal((height, width), dtype=np.float32) * (texture / 2)
    img += noise
    np.clip(img, 0, 255, out=img)
    return img.astype(np.uint8).transpose(1, 2, 0)


def image_name(index):
    return f"photo-{index:03d}.jpg"


def make_image(index):
    """Writes image `index` (its size, shape and quality follow from the index alone)."""
    rng = np.random.default_rng(index)
    long_side = int(rng.integers(1600, 4001))
    a, b = [(4, 3), (3, 2), (16, 9), (1, 1), (5, 4)][rng.integers(0, 5)]
    short_side = long_side * b // a
    width, height = (long_side, short_side) if rng.random() < 0.7 else (short_side, long_side)
    pixels = photo(rng, width, height)
    command = ["cjpeg", "-quality", str(int(rng.integers(85, 91)))]
    if index % 20 == 7:  # one in twenty progressive
        command.append("-progressive")
    path = os.path.join(ORIGIN, image_name(index))
    with open(path + ".tmp", "wb") as out:
        ppm = b"P6\n%d %d\n255\n" % (width, height) + pixels.tobytes()
        subprocess.run(command, input=ppm, stdout=out, check=True)
    os.replace(path + ".tmp", path)


def keep_freed_memory():
    """Generator worker setup: glibc keeps freed image buffers for the next image instead of
    returning them to the kernel (fresh pages cost a third of the time in page faults)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: big buffers from the heap, not mmap
    libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: do not give the heap's top back


def ensure_images(count):
    """The first `count` inputs, generating those that are missing."""
    os.makedirs(ORIGIN, exist_ok=True)
    missing = [i for i in range(count) if not os.path.exists(os.path.join(ORIGIN, image_name(i)))]
    if missing:
        log(f"Generating {len(missing)} input JPEGs in {os.path.relpath(ORIGIN, ROOT)} …")
        start = time.monotonic()
        with multiprocessing.Pool(os.cpu_count(), initializer=keep_freed_memory) as pool:
            pool.map(make_image, missing, chunksize=4)
        log(f"  done in {time.monotonic() - start:.0f} s")
    sizes = [os.path.getsize(os.path.join(ORIGIN, image_name(i))) for i in range(count)]
    log(f"Inputs: {count} JPEGs, {min(sizes) / 1e6:.2f}–{max(sizes) / 1e6:.2f} MB "
        f"(mean {sum(sizes) / len(sizes) / 1e6:.2f} MB)")
    return [image_name(i) for i in range(count)]


# ---------------------------------------------------------------------------
# Processes

def die_with_parent():
    """Child setup: SIGTERM when this script dies, so no server outlives a killed run."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def answers(port):
    """True once something speaks HTTP on the port (any status)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return s.recv(16).startswith(b"HTTP/1.")
    except OSError:
        return False


def wait_until_answering(process, port, log_path, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with status {process.returncode}:\n{tail(log_path)}")
        if answers(port):
            return
        time.sleep(0.1)
    raise RuntimeError(f"did not answer on port {port} within {seconds} s:\n{tail(log_path)}")


def stop(process, timeout=STOP_TIMEOUT_S):
    """SIGTERM, then SIGKILL after `timeout`; returns the seconds to exit, or None if killed."""
    if process.poll() is not None:
        return 0.0
    start = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
        return time.monotonic() - start
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


class Nginx:
    """nginx serving ORIGIN on 127.0.0.1, configured and logging in WORK/nginx."""

    def __enter__(self):
        directory = os.path.join(WORK, "nginx")
        os.makedirs(directory, exist_ok=True)
        self.port = free_port()
        conf = os.path.join(directory, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""{'user root;' if os.geteuid() == 0 else ''}
daemon off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {directory}/access.log;
    client_body_temp_path {directory}/tmp-body;
    proxy_temp_path {directory}/tmp-proxy;
    fastcgi_temp_path {directory}/tmp-fastcgi;
    uwsgi_temp_path {directory}/tmp-uwsgi;
    scgi_temp_path {directory}/tmp-scgi;
    types {{ image/jpeg jpg; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    server {{
        listen 127.0.0.1:{self.port};
        root {ORIGIN};
    }}
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        error_log = os.path.join(directory, "error.log")
        self.process = subprocess.Popen([nginx, "-p", directory, "-c", conf, "-e", error_log],
                                        stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        try:
            wait_until_answering(self.process, self.port, error_log)
        except BaseException:
            stop(self.process)
            raise
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *_):
        stop(self.process)


def build(key, swift):
    """Builds server `key` in release; returns (executable path, None) or (None, reason)."""
    server = SERVERS[key]
    package = os.path.join(ROOT, server["package"])
    if not os.path.exists(os.path.join(package, "Package.swift")):
        return None, f"{server['package']}/Package.swift does not exist"
    log_path = os.path.join(WORK, f"build-{key}.log")
    log(f"Building {server['label']} ({server['package']}, release; log: {os.path.relpath(log_path, ROOT)}) …")
    start = time.monotonic()
    base = [swift, "build", "-c", "release", "--package-path", package]
    with open(log_path, "w") as out:
        built = subprocess.run(base + server["build"], stdout=out, stderr=subprocess.STDOUT).returncode == 0
    if not built:
        return None, f"the build failed:\n{tail(log_path, 25)}"
    bin_dir = subprocess.run(base + ["--show-bin-path"], capture_output=True, text=True).stdout.strip()
    path = os.path.join(bin_dir, server["executable"])
    if not os.access(path, os.X_OK):
        return None, f"the build made no {path}"
    log(f"  built in {time.monotonic() - start:.0f} s: {os.path.relpath(path, ROOT)}")
    return path, None


# ---------------------------------------------------------------------------
# /proc figures

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU seconds of the process so far (all threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14, 15)


def busy_cores(seconds=1.0):
    """Cores' worth of CPU in use over the next `seconds` (all processes), from /proc/stat."""
    def sample():
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:9]]
        return sum(ticks) - ticks[3] - ticks[4], sum(ticks)  # busy (all but idle, iowait), total

    busy, total = sample()
    time.sleep(seconds)
    busy2, total2 = sample()
    return (busy2 - busy) / max(1, total2 - total) * os.cpu_count()


def own_cpu_seconds():
    """User + system CPU seconds of this script (the load client) so far."""
    t = os.times()
    return t.user + t.system


def flush_writes():
    """Writes the page cache's dirty pages out now (sync) and returns how long that took.

    A server with a disk tier (ImageKit's keeps the original bytes: ~600 MB in COLD) leaves
    dirty pages that the kernel writes back ~30 s later, on these 2 cores in the middle of
    the next workload. Flushing between workloads charges that write to the workload that
    made it (its figures are taken before), not to the next one."""
    started = time.monotonic()
    os.sync()
    return time.monotonic() - started


def memory_kib(pid, key):
    """A /proc/PID/status figure in KiB: VmHWM (peak RSS) or VmRSS."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# ---------------------------------------------------------------------------
# The load client: HTTP/1.1 with keep-alive over asyncio streams, no Accept header
# (both servers then answer JPEG quality 80).

class Connection:
    def __init__(self, port):
        self.port = port
        self.reader = self.writer = None

    def close(self):
        if self.writer:
            self.writer.close()
        self.reader = self.writer = None

    async def get(self, path, started=None):
        """(seconds since `started` or now, status, headers, body); status 0 and the error in
        headers["error"] when the request failed."""
        started = time.perf_counter() if started is None else started
        try:
            status, headers, body = await asyncio.wait_for(self._exchange(path), REQUEST_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError) as error:
            self.close()
            return time.perf_counter() - started, 0, {"error": repr(error)}, b""
        return time.perf_counter() - started, status, headers, body

    async def _exchange(self, path):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode())
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        headers = {}
        for line in head[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
                chunks.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            while await self.reader.readuntil(b"\r\n") != b"\r\n":  # trailer fields
                pass
            body = b"".join(chunks)
        else:
            body = await self.reader.read()
            headers["connection"] = "close"
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body


def q80_luma_sum():
    """Sum of libjpeg's luminance quantisation table at quality 80 (order-free)."""
    base = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
            14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
            18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
            49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
    return sum(min(255, max(1, (v * 40 + 50) // 100)) for v in base)


Q80_LUMA_SUM = q80_luma_sum()


def output_problem(body, width):
    """None when `body` is a JPEG whose long side is `width` made at quality 80, else what is wrong."""
    if body[:2] != b"\xff\xd8":
        return "not a JPEG"
    pos, luma, size = 2, None, None
    while pos + 4 <= len(body) and size is None:
        marker, length = body[pos + 1], int.from_bytes(body[pos + 2:pos + 4], "big")
        segment = body[pos + 4:pos + 2 + length]
        if marker == 0xDB and luma is None and segment and segment[0] & 0x0F == 0:
            precision = segment[0] >> 4
            luma = sum(segment[1:65]) if precision == 0 else None
        elif marker in (0xC0, 0xC1, 0xC2):
            size = (int.from_bytes(segment[3:5], "big"), int.from_bytes(segment[1:3], "big"))
        pos += 2 + length
    if size is None:
        return "no frame header"
    if max(size) != width:
        return f"{size[0]}x{size[1]} px, long side should be {width}"
    if luma != Q80_LUMA_SUM:
        return "luminance table is not libjpeg's quality 80"
    return None


class Sample:
    """One request: its latency, status, X-Cache, what went wrong (if anything) and kind (hot/cold)."""
    __slots__ = ("latency", "status", "x_cache", "error", "problem", "kind")

    def __init__(self, latency, status, headers, body, kind=""):
        self.latency = latency
        self.status = status
        self.x_cache = headers.get("x-cache", "-")
        self.error = None if status == 200 else headers.get("error") or f"status {status}: {body[:200]!r}"
        self.problem = output_problem(body, WIDTH) if status == 200 else None
        self.kind = kind


async def closed_loop(port, paths, in_flight):
    """Every path once, `in_flight` connections each sending its next request when the last ends."""
    samples = [None] * len(paths)
    queue = iter(enumerate(paths))  # shared by the workers: each takes the next unsent path

    async def worker():
        connection = Connection(port)
        for i, path in queue:
            samples[i] = Sample(*await connection.get(path))
        connection.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return samples, time.perf_counter() - start


async def open_loop(port, schedule, rate):
    """Request i of `schedule` ((path, kind) pairs) starts at i / rate s, on an idle connection or a
    new one; latency counts from that scheduled start, so a slow server cannot slow the load."""
    samples = [None] * len(schedule)
    idle = []
    start = time.perf_counter() + 0.05

    async def one(i, path, kind, due):
        connection = idle.pop() if idle else Connection(port)
        samples[i] = Sample(*await connection.get(path, started=due), kind)
        idle.append(connection)

    tasks = []
    for i, (path, kind) in enumerate(schedule):
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        tasks.append(asyncio.create_task(one(i, path, kind, due)))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    for connection in idle:
        connection.close()
    return samples, elapsed


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, max(0, int(np.ceil(p / 100 * len(sorted_values))) - 1))]


def summarise(samples, elapsed):
    ok = sorted(s.latency * 1000 for s in samples if s.status == 200)
    errors = [s.error for s in samples if s.error]
    problems = [s.problem for s in samples if s.problem]
    return {
        "requests": len(samples),
        "seconds": elapsed,
        "req_per_s": len(samples) / elapsed,
        "min_ms": ok[0] if ok else 0.0,
        "p50_ms": percentile(ok, 50),
        "p90_ms": percentile(ok, 90),
        "p99_ms": percentile(ok, 99),
        "max_ms": ok[-1] if ok else 0.0,
        "errors": len(errors),
        "error_statuses": dict(collections.Counter(str(s.status) for s in samples if s.error)),
        "first_error": errors[0] if errors else None,
        "wrong_output": len(problems),
        "first_wrong_output": problems[0] if problems else None,
        "x_cache": dict(collections.Counter(s.x_cache for s in samples)),
    }


def warm_up(port, paths):
    """Requests each path once (sequentially) so that it is cached."""
    samples, _ = asyncio.run(closed_loop(port, paths, 1))
    failed = [p for p, s in zip(paths, samples) if s.status != 200]
    if failed:
        raise RuntimeError(f"warm-up failed for {len(failed)} paths, first {failed[0]}")


WRK_SCRIPT = """-- Written by scripts/bench_service.py: cycles over the hot paths, then prints the figures.
local paths = {%s}
local i = 0
function request()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {\\"requests\\": %%d, \\"duration_us\\": %%d, \\"status_errors\\": %%d, \\"socket_errors\\": %%d, " ..
    "\\"min_us\\": %%d, \\"p50_us\\": %%d, \\"p90_us\\": %%d, \\"p99_us\\": %%d, \\"max_us\\": %%d}\\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency.min, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


def run_wrk(port, paths, seconds, key):
    script = os.path.join(WORK, "warm.lua")
    with open(script, "w") as f:
        f.write(WRK_SCRIPT % ", ".join(f'"{p}"' for p in paths))
    command = ["wrk", "-t2", "-c16", f"-d{seconds}s", "--latency", "--timeout", "10s", "-s", script,
               f"http://127.0.0.1:{port}"]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    with open(os.path.join(WORK, f"wrk-{key}.txt"), "w") as f:
        f.write(output)
    line = next(l for l in output.splitlines() if l.startswith("WRKJSON "))
    w = json.loads(line[len("WRKJSON "):])
    elapsed = w["duration_us"] / 1e6
    return {
        "requests": w["requests"],
        "seconds": elapsed,
        "req_per_s": w["requests"] / elapsed,
        "min_ms": w["min_us"] / 1000,
        "p50_ms": w["p50_us"] / 1000,
        "p90_ms": w["p90_us"] / 1000,
        "p99_ms": w["p99_us"] / 1000,
        "max_ms": w["max_us"] / 1000,
        "errors": w["status_errors"] + w["socket_errors"],
        "error_statuses": {"non-2xx/3xx": w["status_errors"], "socket": w["socket_errors"]},
    }


def mixed_schedule(hot, cold, count):
    """`count` (path, kind) pairs: every fifth cold (each cold name once), the rest hot at random."""
    rng = np.random.default_rng(13)
    schedule, cold_names = [], iter(cold)
    for i in range(count):
        if i % round(1 / MIXED_COLD_SHARE) == 2:
            schedule.append((f"/thumb/{next(cold_names)}?w={WIDTH}", "cold"))
        else:
            schedule.append((f"/thumb/{hot[rng.integers(0, len(hot))]}?w={WIDTH}", "hot"))
    return schedule


def read_inputs(names):
    """Reads every input once, so that nginx serves each server from the page cache alike."""
    for name in names:
        with open(os.path.join(ORIGIN, name), "rb") as f:
            while f.read(1 << 20):
                pass


def measure(key, executable, origin, names, mixed_cold, args):
    """Runs the three workloads on one fresh server process; returns its figures."""
    read_inputs(names + mixed_cold)
    busy = busy_cores()
    if busy > 0.3:
        log(f"Note: other processes use {busy:.1f} of the {os.cpu_count()} cores before "
            f"{SERVERS[key]['label']}'s run: the figures will be noisy.")
    cache = os.path.join(WORK, f"cache-{key}")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    port = free_port()
    log_path = os.path.join(WORK, f"{key}.log")
    label = SERVERS[key]["label"]
    with open(log_path, "w") as out:
        process = subprocess.Popen([executable, "--port", str(port), "--origin", origin, "--cache", cache],
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=die_with_parent)
    figures = {"log": os.path.relpath(log_path, ROOT), "busy_cores_before": busy}
    try:
        wait_until_answering(process, port, log_path)
        pid = process.pid

        log(f"{label}: COLD, {len(names)} names, {COLD_IN_FLIGHT} in flight …")
        cpu, client_cpu = cpu_seconds(pid), own_cpu_seconds()
        samples, elapsed = asyncio.run(closed_loop(port, [f"/thumb/{n}?w={WIDTH}" for n in names],
                                                   COLD_IN_FLIGHT))
        cold = summarise(samples, elapsed)
        cold["cpu_ms_per_request"] = (cpu_seconds(pid) - cpu) * 1000 / cold["requests"]
        cold["client_cpu_ms_per_request"] = (own_cpu_seconds() - client_cpu) * 1000 / cold["requests"]
        cold["peak_rss_mib"] = memory_kib(pid, "VmHWM") / 1024
        cold["rss_mib"] = memory_kib(pid, "VmRSS") / 1024
        figures["cold"] = cold
        figures["flush_after_cold_s"] = flush_writes()

        hot = [f"/thumb/{n}?w={WIDTH}" for n in names[:WARM_HOT]]
        log(f"{label}: WARM, {len(hot)} hot names, wrk 16 connections for {args.warm_seconds} s …")
        warm_up(port, hot)
        cpu = cpu_seconds(pid)
        warm = run_wrk(port, hot, args.warm_seconds, key)
        warm["cpu_ms_per_request"] = (cpu_seconds(pid) - cpu) * 1000 / max(1, warm["requests"])
        warm["rss_mib"] = memory_kib(pid, "VmRSS") / 1024
        figures["warm"] = warm

        hot_names = names[:MIXED_HOT]
        schedule = mixed_schedule(hot_names, mixed_cold, len(mixed_cold) * round(1 / MIXED_COLD_SHARE))
        log(f"{label}: MIXED, {len(schedule)} requests at {args.mixed_rate:g} req/s, "
            f"{len(mixed_cold)} to new names …")
        warm_up(port, [f"/thumb/{n}?w={WIDTH}" for n in hot_names])
        flush_writes()
        cpu, client_cpu = cpu_seconds(pid), own_cpu_seconds()
        samples, elapsed = asyncio.run(open_loop(port, schedule, args.mixed_rate))
        mixed = summarise(samples, elapsed)
        mixed["cpu_ms_per_request"] = (cpu_seconds(pid) - cpu) * 1000 / mixed["requests"]
        mixed["client_cpu_ms_per_request"] = (own_cpu_seconds() - client_cpu) * 1000 / mixed["requests"]
        for kind in ("hot", "cold"):
            part = sorted(s.latency * 1000 for s in samples if s.kind == kind and s.status == 200)
            mixed[f"{kind}_p99_ms"] = percentile(part, 99)
        mixed["peak_rss_mib"] = memory_kib(pid, "VmHWM") / 1024
        mixed["rss_mib"] = memory_kib(pid, "VmRSS") / 1024
        figures["mixed"] = mixed
    finally:
        seconds = stop(process)
        figures["stop_seconds"] = seconds
        if seconds is None:
            log(f"{label}: did NOT exit within {STOP_TIMEOUT_S} s of SIGTERM (killed)")
    return figures


# ---------------------------------------------------------------------------
# Output

# (label, workload, figure, format, target relation, target): ratio = ImageKit ÷ peer.
ROWS = [
    ("COLD req/s", "cold", "req_per_s", "{:.1f}", ">=", 1.4),
    ("COLD p50 ms", "cold", "p50_ms", "{:.1f}", None, None),
    ("COLD p90 ms", "cold", "p90_ms", "{:.1f}", None, None),
    ("COLD p99 ms", "cold", "p99_ms", "{:.1f}", None, None),
    ("COLD errors", "cold", "errors", "{:d}", None, None),
    ("COLD peak RSS MiB", "cold", "peak_rss_mib", "{:.0f}", "<=", 1.0),
    ("COLD CPU ms/req", "cold", "cpu_ms_per_request", "{:.1f}", None, None),
    ("WARM req/s", "warm", "req_per_s", "{:.0f}", ">=", 1.0),
    ("WARM p50 ms", "warm", "p50_ms", "{:.2f}", None, None),
    ("WARM p90 ms", "warm", "p90_ms", "{:.2f}", None, None),
    ("WARM p99 ms", "warm", "p99_ms", "{:.2f}", None, None),
    ("WARM errors", "warm", "errors", "{:d}", None, None),
    ("WARM CPU ms/req", "warm", "cpu_ms_per_request", "{:.3f}", None, None),
    ("MIXED req/s", "mixed", "req_per_s", "{:.1f}", None, None),
    ("MIXED p50 ms", "mixed", "p50_ms", "{:.1f}", None, None),
    ("MIXED p90 ms", "mixed", "p90_ms", "{:.1f}", None, None),
    ("MIXED p99 ms", "mixed", "p99_ms", "{:.1f}", "<=", 1.0),
    ("MIXED p99 hot ms", "mixed", "hot_p99_ms", "{:.1f}", None, None),
    ("MIXED p99 cold ms", "mixed", "cold_p99_ms", "{:.1f}", None, None),
    ("MIXED errors", "mixed", "errors", "{:d}", None, None),
    ("MIXED peak RSS MiB", "mixed", "peak_rss_mib", "{:.0f}", None, None),
    ("MIXED CPU ms/req", "mixed", "cpu_ms_per_request", "{:.1f}", None, None),
]


def combine(rounds):
    """One server's figures over several rounds: medians of the measurements, sums of the
    error counts, the slowest stop; the first example of an error or wrong output kept."""
    def merge(values, key):
        values = [v for v in values if v is not None]
        if not values:
            return None
        if key in ("errors", "wrong_output", "requests"):
            return sum(values)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return statistics.median(values)
        return values[0]
    combined = {"rounds": len(rounds)}
    for workload in ("cold", "warm", "mixed"):
        parts = [r[workload] for r in rounds if workload in r]
        if parts:
            keys = {k for part in parts for k in part}
            combined[workload] = {k: merge([part.get(k) for part in parts], k) for k in keys}
    stops = [r.get("stop_seconds") for r in rounds]
    combined["stop_seconds"] = None if None in stops else max(stops)
    return combined


def round_ratios(rounds):
    """Per round, ImageKit ÷ peer for each targeted figure, for the table's footnote."""
    lines = []
    for label, workload, key, _, relation, target in ROWS:
        if target is None:
            continue
        values = [ratio(figure(a, workload, key), figure(b, workload, key))
                  for a, b in zip(rounds.get("imagekit", []), rounds.get("peer", []))]
        lines.append(f"  {label}: " + ", ".join("-" if v is None else f"{v:.3f}" for v in values))
    return lines


def figure(figures, workload, key):
    return (figures or {}).get(workload, {}).get(key)


def ratio(ours, peer):
    return ours / peer if ours is not None and peer else None


def met(value, relation, target):
    return value >= target if relation == ">=" else value <= target


def print_table(results):
    ik, peer = results.get("imagekit"), results.get("peer")
    rows = [("", "ImageKit", "peer", "ratio", "target", "")]
    for label, workload, key, fmt, relation, target in ROWS:
        a, b = figure(ik, workload, key), figure(peer, workload, key)
        r = ratio(a, b)
        rows.append((label,
                     "-" if a is None else fmt.format(a),
                     "-" if b is None else fmt.format(b),
                     "" if r is None else f"{r:.3f}",
                     "" if target is None else f"{relation} {target:g}",
                     "" if r is None or target is None else ("✓" if met(r, relation, target) else "✗")))
    rows.append(("wrong output (COLD+MIXED)",
                 *("-" if f is None else str(sum(f[w]["wrong_output"] for w in ("cold", "mixed") if w in f))
                   for f in (ik, peer)), "", "", ""))
    rows.append(("exit after SIGTERM s", *("-" if f is None else
                                           ("killed" if f["stop_seconds"] is None else f"{f['stop_seconds']:.2f}")
                                           for f in (ik, peer)), "", f"<= {STOP_TIMEOUT_S}", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print()
    for i, row in enumerate(rows):
        print("  ".join(cell.rjust(widths[j]) if j else cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for key, f in results.items():
        for workload in ("cold", "mixed"):
            for kind in ("error", "wrong_output"):
                example = f.get(workload, {}).get(f"first_{kind}")
                if example:
                    print(f"{SERVERS[key]['label']} {workload}: {kind.replace('_', ' ')}, e.g. {example}")
    print()


def record(name, workload, ik, peer, value, relation=None, target=None, latencies=True):
    """One results.jsonl record in scripts/bench_report.py's format: ratio = ImageKit ÷ peer;
    the median column holds each server's median (and minimum) request latency."""
    a, b = ik.get(workload, {}), peer.get(workload, {})
    r = {"section": SECTION, "name": name, "anchor": PEER_DESCRIPTION, "ratio": ratio(a.get(value), b.get(value)),
         "notes": {f"imagekit {value}": a.get(value), f"peer {value}": b.get(value)}}
    if latencies:
        r.update(medianMs=a["p50_ms"], minMs=a["min_ms"], anchorMedianMs=b["p50_ms"])
        for p in ("p90_ms", "p99_ms"):
            r["notes"][f"imagekit {p}"], r["notes"][f"peer {p}"] = a[p], b[p]
    if target is not None:
        r.update(target=target, targetRelation=relation)
    return r


def write_report_records(ik, peer, args):
    """Replaces this section's records in results.jsonl and prints the combined report."""
    rate = f"{args.mixed_rate:g} req/s, 20 % new names"
    records = [
        record("COLD req/s (8 in flight)", "cold", ik, peer, "req_per_s", ">=", 1.4),
        record("COLD peak RSS (VmHWM)", "cold", ik, peer, "peak_rss_mib", "<=", 1.0, latencies=False),
        record("COLD CPU per request", "cold", ik, peer, "cpu_ms_per_request", latencies=False),
        record("WARM req/s (wrk, 16 connections, 20 hot)", "warm", ik, peer, "req_per_s", ">=", 1.0),
        record("WARM CPU per request", "warm", ik, peer, "cpu_ms_per_request", latencies=False),
        record(f"MIXED p99 ({rate})", "mixed", ik, peer, "p99_ms", "<=", 1.0),
        record("MIXED CPU per request", "mixed", ik, peer, "cpu_ms_per_request", latencies=False),
    ]
    path = os.path.join(RESULTS, "results.jsonl")
    kept = []
    if os.path.exists(path):
        with open(path) as f:
            kept = [line for line in f if line.strip() and json.loads(line)["section"] != SECTION]
    with open(path, "w") as f:
        f.writelines(kept)
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_report.py"), path], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default=os.environ.get("SERVICE_SERVERS") or "imagekit,peer",
                        help="comma-separated: imagekit, peer ($SERVICE_SERVERS)")
    parser.add_argument("--warm-seconds", type=int, default=int(os.environ.get("WARM_SECONDS") or 20),
                        help="length of WARM ($WARM_SECONDS, 20)")
    parser.add_argument("--mixed-seconds", type=float, default=float(os.environ.get("MIXED_SECONDS") or 20),
                        help="length of MIXED ($MIXED_SECONDS, 20)")
    parser.add_argument("--mixed-rate", type=float, default=float(os.environ.get("MIXED_RATE") or 50),
                        help="requests per second in MIXED ($MIXED_RATE, 50)")
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS") or 3),
                        help="times the whole sequence runs, servers alternating ($ROUNDS, 3)")
    parser.add_argument("--swift", default=os.environ.get("SWIFT") or "swift")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    unknown = [s for s in servers if s not in SERVERS]
    if unknown or not servers:
        parser.error(f"--servers takes imagekit and/or peer, not {args.servers!r}")
    # SIGTERM ends the run like Ctrl-C: the `finally` blocks stop nginx and the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(WORK, exist_ok=True)

    failures = {}
    executables = {}
    for key in servers:
        path, reason = build(key, args.swift)
        if path:
            executables[key] = path
        else:
            failures[key] = f"did not build: {reason}"
            log(f"\n*** {SERVERS[key]['label']} ({SERVERS[key]['package']}) {failures[key]}\n"
                f"*** Going on without it.\n")

    mixed_cold_count = max(1, round(MIXED_COLD_SHARE * args.mixed_rate * args.mixed_seconds))
    names = ensure_images(COLD_COUNT + mixed_cold_count)
    cold_names, mixed_cold = names[:COLD_COUNT], names[COLD_COUNT:]

    rounds = {key: [] for key in executables}
    with Nginx() as nginx:
        log(f"nginx: {nginx.url} serving {os.path.relpath(ORIGIN, ROOT)}")
        for n in range(args.rounds):
            order = list(executables) if n % 2 == 0 else list(reversed(executables))
            for key in order:
                if key in failures:
                    continue
                log(f"— round {n + 1} of {args.rounds}: {SERVERS[key]['label']}")
                try:
                    rounds[key].append(measure(key, executables[key], nginx.url, cold_names, mixed_cold, args))
                except Exception as error:  # reported, and the run goes on with the next server
                    failures[key] = f"run failed: {error}"
                    log(f"\n*** {SERVERS[key]['label']}: {failures[key]}\n")
    results = {key: combine(r) for key, r in rounds.items() if r and key not in failures}

    print_table(results)
    if args.rounds > 1 and "imagekit" in results and "peer" in results:
        print(f"Per round (ImageKit ÷ peer), the table shows the median of {args.rounds}:")
        print("\n".join(round_ratios(rounds)))
        print()
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "service.json"), "w") as f:
        json.dump({"config": {"servers": servers, "inputs": len(names), "cold_names": COLD_COUNT,
                              "width": WIDTH, "cold_in_flight": COLD_IN_FLIGHT, "warm_hot_names": WARM_HOT,
                              "warm_seconds": args.warm_seconds, "mixed_hot_names": MIXED_HOT,
                              "mixed_cold_names": len(mixed_cold), "mixed_rate": args.mixed_rate,
                              "mixed_seconds": args.mixed_seconds, "rounds": args.rounds},
                   "servers": results, "rounds": rounds, "failures": failures}, f, indent=1)
    log(f"Raw figures: {os.path.relpath(os.path.join(RESULTS, 'service.json'), ROOT)}")
    if "imagekit" in results and "peer" in results:
        write_report_records(results["imagekit"], results["peer"], args)
    else:
        log("results.jsonl not updated: the ratios need both ImageKit and the peer.")
    for key, reason in failures.items():
        log(f"FAILED: {SERVERS[key]['label']} {reason.splitlines()[0]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
