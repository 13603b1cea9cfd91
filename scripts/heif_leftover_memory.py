#!/usr/bin/env python3
"""Damages the HEIC fixtures' HEVC data and decodes each damaged file under two heap fills.

For each file of Tests/Fixtures/heic and Tests/Fixtures/heic-built, makes PER_FILE copies whose
`mdat` is damaged (seeded, so the set is the same every run): three bits flipped, or a run of
4-64 bytes zeroed, at random places inside the box's data. `imagekit decode --sha256` decodes the
whole set twice, once under MALLOC_PERTURB_=85 and once under =170 (glibc fills fresh blocks with
a pattern derived from the value). A file whose two answers differ (other pixels, or pixels once
and an error once) shows memory the decoder never wrote. Prints the count and those files; exits
1 if there is any.

usage: scripts/heif_leftover_memory.py [IMAGEKIT] [--per-file N] [--keep DIR]
IMAGEKIT defaults to .build/release/imagekit.
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = ["Tests/Fixtures/heic", "Tests/Fixtures/heic-built"]


def mdat_range(data):
    """(start, end) of the first top-level mdat box's data, or None."""
    at = 0
    while at + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
            header = 16
        elif size == 0:
            size = len(data) - at
        if size < header:
            return None
        if kind == b"mdat":
            return at + header, min(at + size, len(data))
        at += size
    return None


def damaged(data, rng):
    start, end = mdat_range(data)
    out = bytearray(data)
    if rng.random() < 0.5:
        for _ in range(3):
            at = rng.randrange(start, end)
            out[at] ^= 1 << rng.randrange(8)
    else:
        run = rng.randint(4, 64)
        at = rng.randrange(start, max(start + 1, end - run))
        out[at:at + run] = bytes(min(run, end - at))
    return bytes(out)


def decode_all(imagekit, paths, perturb):
    env = dict(os.environ, MALLOC_PERTURB_=str(perturb))
    run = subprocess.run([imagekit, "decode", "--sha256", *paths], env=env, capture_output=True, text=True)
    answers = {}
    for line in run.stdout.splitlines():
        path, _, rest = line.partition("\t")
        answers[path] = rest
    missing = [p for p in paths if p not in answers]
    if missing:
        sys.exit("imagekit gave no answer for %s (exit %d): %s" % (missing[0], run.returncode, run.stderr[-500:]))
    return answers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("imagekit", nargs="?", default=os.path.join(ROOT, ".build/release/imagekit"))
    parser.add_argument("--per-file", type=int, default=8)
    parser.add_argument("--keep", help="write the damaged files here and keep them")
    args = parser.parse_args()

    directory = args.keep or tempfile.mkdtemp(prefix="heif-leftover-")
    os.makedirs(directory, exist_ok=True)
    paths = []
    for source in SOURCES:
        for name in sorted(os.listdir(os.path.join(ROOT, source))):
            if not name.endswith((".heic", ".heif")):
                continue
            data = open(os.path.join(ROOT, source, name), "rb").read()
            if mdat_range(data) is None:
                continue
            rng = random.Random(name)
            for i in range(args.per_file):
                path = os.path.join(directory, "%s-%02d%s" % (os.path.splitext(name)[0], i, os.path.splitext(name)[1]))
                with open(path, "wb") as f:
                    f.write(damaged(data, rng))
                paths.append(path)

    a = decode_all(args.imagekit, paths, 85)
    b = decode_all(args.imagekit, paths, 170)
    differ = [p for p in paths if a[p] != b[p]]
    errors = sum(1 for p in paths if a[p].startswith("error"))
    print("%d damaged files, %d decoded with an error (MALLOC_PERTURB_=85), %d differ between 85 and 170"
          % (len(paths), errors, len(differ)))
    for p in differ:
        print("  %s\n    85:  %s\n    170: %s" % (os.path.basename(p), a[p], b[p]))
    if not args.keep:
        for p in paths:
            os.remove(p)
        os.rmdir(directory)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
