#!/usr/bin/env python3
"""Runs `imagekit decode --sha256` over every file of a corpus manifest.

ok files must decode to the expected premultiplied-RGBA SHA-256 (16-bit PNGs
may match either the truncated or the rounded reference); error files must
fail cleanly (exit 1 with an error line); either files must only not crash,
hang (10 s) or exceed memory (1 GiB address space). Prints a per-format table
and ends with "N passed, N failed".
"""
import argparse
import collections
import json
import os
import resource
import subprocess
import sys

TIMEOUT_S = 10
ADDRESS_SPACE = 1 << 30


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_one(imagekit, path):
    """Returns (kind, detail): kind is 'ok', 'error', 'crash' or 'timeout'."""
    try:
        proc = subprocess.run([imagekit, "decode", "--sha256", path], capture_output=True,
                              timeout=TIMEOUT_S, preexec_fn=limit_memory, text=True)
    except subprocess.TimeoutExpired:
        return "timeout", f"no answer within {TIMEOUT_S} s"
    out = proc.stdout.strip().split("\n")[-1] if proc.stdout.strip() else ""
    fields = out.split("\t")
    if proc.returncode == 0 and len(fields) == 5:
        return "ok", fields
    if proc.returncode == 1 and len(fields) == 3 and fields[1] == "error":
        return "error", fields[2]
    detail = f"exit {proc.returncode}"
    if proc.returncode < 0:
        detail = f"killed by signal {-proc.returncode}"
    return "crash", f"{detail}: {proc.stderr.strip()[-300:]}"


def check(entry, kind, detail):
    """Returns None if the result meets the expectation, else a reason."""
    expect = entry["expect"]
    if kind in ("crash", "timeout"):
        return detail
    if expect == "either":
        return None
    if expect == "error":
        return None if kind == "error" else "decoded, but the file should fail"
    if kind == "error":
        return f"failed: {detail}"
    _, _, size, frames, digest = detail
    want = f'{entry["width"]}x{entry["height"]}'
    if size != want:
        return f"size {size}, expected {want}"
    if entry.get("frames") and int(frames) != entry["frames"]:
        return f"{frames} frames, expected {entry['frames']}"
    accepted = {entry["rgba_premultiplied_sha256"], entry.get("rgba_premultiplied_sha256_round16")}
    if digest not in accepted:
        return f"pixels differ (sha256 {digest[:16]}…)"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--imagekit", required=True, help="path to the imagekit binary")
    parser.add_argument("--corpus", required=True, help="corpus directory with manifest.json")
    parser.add_argument("--verbose", action="store_true", help="print every file")
    args = parser.parse_args()

    with open(os.path.join(args.corpus, "manifest.json")) as f:
        manifest = json.load(f)
    table = collections.defaultdict(lambda: collections.Counter())
    failures = []
    entries = manifest["entries"]
    for i, entry in enumerate(entries, 1):
        path = os.path.join(args.corpus, entry["path"])
        kind, detail = run_one(args.imagekit, path)
        reason = check(entry, kind, detail)
        row = table[entry["format"]]
        row[entry["expect"] + (" passed" if reason is None else " failed")] += 1
        if reason is not None:
            failures.append((entry["path"], entry["expect"], reason))
        if args.verbose:
            print(f"[{i}/{len(entries)}] {entry['path']}: {'ok' if reason is None else reason}")
        elif sys.stdout.isatty():
            print(f"\r[{i}/{len(entries)}]", end="", flush=True)
    if sys.stdout.isatty() and not args.verbose:
        print("\r", end="")

    print(f"{'format':<8} {'ok':>12} {'error':>12} {'either':>12}")
    for fmt in sorted(table):
        row = table[fmt]
        cells = []
        for expect in ("ok", "error", "either"):
            p, f = row[expect + " passed"], row[expect + " failed"]
            cells.append(f"{p}/{p + f}" if p + f else "-")
        print(f"{fmt:<8} {cells[0]:>12} {cells[1]:>12} {cells[2]:>12}")
    for path, expect, reason in failures:
        print(f"FAIL [{expect}] {path}: {reason}")
    passed = len(entries) - len(failures)
    print(f"{passed} passed, {len(failures)} failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
