#!/usr/bin/env python3
"""Writes Tests/Fixtures/apng/references.json: the expected frames of every APNG in
Tests/Fixtures/apng/, for APNGDecodeTests.

Each frame is the canvas after that frame, as the APNG specification composites it,
produced independently of ImageKit: the frame's data is re-wrapped as a PNG of its own
(IHDR with the frame's size, the file's PLTE and tRNS, the fdAT/IDAT payloads as IDAT)
and decoded by Pillow; frames are composited here with Pillow's paste (blend source)
and Image.alpha_composite (blend over) on an RGBA canvas that starts transparent black,
with dispose none/background/previous (previous on frame 0 is background). A file whose
IDAT image has no fcTL before it contributes only its fcTL frames (the IDAT image is not
part of the animation). Pixels are then premultiplied with p = (c*a + 127) // 255 and
hashed with SHA-256 (rows tightly packed), as the corpus manifest does.

Every frame is also compared with Pillow's own APNG reader (im.seek(i)): "pillow_agrees"
lists, per frame, whether it gives the same pixels. It does for every frame except where
blend over meets a partly transparent pixel: Pillow's reader pastes with the frame's alpha
as a mask, which blends the alpha channel like a colour (an opaque canvas under a
half-transparent frame turns partly transparent), where the specification's "over" keeps
it opaque. Files Pillow refuses (sequence errors, missing frame data, ...) are listed with
Pillow's error and no frames.

Requires Pillow (made with Pillow 10.4.0: pip install pillow==10.4.0; Pillow 13.0.0's
reader also differs on dispose_op_previous*.png, where it does not restore the canvas).
Usage: python3 scripts/apng_references.py
"""
import hashlib
import io
import json
import os
import struct
import sys
import warnings
import zlib

import PIL
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "Tests", "Fixtures", "apng")


def chunks(data):
    """(type, body) of every complete chunk after the signature."""
    i = 8
    while i + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[i:i + 8])
        if i + 12 + length > len(data):
            return
        yield kind, data[i + 8:i + 8 + length]
        i += 12 + length


def png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def animation(data):
    """(ihdr, plte, trns, num_plays, frames) with frames [(fctl fields, [payloads])], or None
    when the file is a still (no single valid acTL before the IDAT)."""
    ihdr = plte = trns = actl = None
    actl_count = 0
    frames = []
    idat_seen = False
    for kind, body in chunks(data):
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"PLTE" and not idat_seen:
            plte = body
        elif kind == b"tRNS" and not idat_seen:
            trns = body
        elif kind == b"acTL" and not idat_seen:
            actl, actl_count = body, actl_count + 1
        elif kind == b"IDAT":
            idat_seen = True
            if frames and frames[-1][2]:
                frames[-1][1].append(body)
        elif kind == b"fcTL":
            frames.append((struct.unpack(">IIIIIHHBB", body), [], not idat_seen))
        elif kind == b"fdAT" and frames:
            frames[-1][1].append(body[4:])
        elif kind == b"IEND":
            break
    if actl_count != 1:
        return None
    num_frames, num_plays = struct.unpack(">II", actl)
    if num_frames == 0 or num_frames > 0x80000000:
        return None
    return ihdr, plte, trns, num_plays, [(f, p) for f, p, _ in frames[:num_frames]]


def decode_frame(ihdr, plte, trns, fctl, payloads):
    _, w, h = fctl[:3]
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">II", w, h) + ihdr[8:])
    if plte is not None:
        out += png_chunk(b"PLTE", plte)
    if trns is not None:
        out += png_chunk(b"tRNS", trns)
    out += b"".join(png_chunk(b"IDAT", p) for p in payloads) + png_chunk(b"IEND", b"")
    return Image.open(io.BytesIO(out)).convert("RGBA")


def premultiplied_sha256(im):
    b = bytearray(im.convert("RGBA").tobytes())
    for i in range(0, len(b), 4):
        a = b[i + 3]
        b[i] = (b[i] * a + 127) // 255
        b[i + 1] = (b[i + 1] * a + 127) // 255
        b[i + 2] = (b[i + 2] * a + 127) // 255
    return hashlib.sha256(bytes(b)).hexdigest()


def composite(ihdr, plte, trns, frames):
    """Premultiplied SHA-256 and delay (ms) of every frame."""
    width, height = struct.unpack(">II", ihdr[:8])
    canvas = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    out = []
    previous = None  # (box, dispose op, saved region)
    for index, (fctl, payloads) in enumerate(frames):
        _, w, h, x, y, num, den, dispose, blend = fctl
        if previous:
            box, op, saved = previous
            if op == 1:
                canvas.paste((0, 0, 0, 0), box)
            elif op == 2:
                canvas.paste(saved, box)
        box = (x, y, x + w, y + h)
        if dispose == 2 and index == 0:
            dispose = 1
        saved = canvas.crop(box) if dispose == 2 else None
        frame = decode_frame(ihdr, plte, trns, fctl, payloads)
        if blend == 0:
            canvas.paste(frame, box)
        else:
            region = Image.alpha_composite(canvas.crop(box), frame)
            canvas.paste(region, box)
        den = den or 100
        out.append((premultiplied_sha256(canvas), (num * 1000 + den // 2) // den))
        previous = (box, dispose, saved)
    return out


def pillow_frames(path, count):
    """Premultiplied SHA-256 of Pillow's reader's animation frames (its extra frame 0, the
    IDAT image outside the animation, left out)."""
    with Image.open(path) as im:
        skip = 1 if im.info.get("default_image") else 0
        hashes = []
        for i in range(skip, skip + count):
            im.seek(i)
            hashes.append(premultiplied_sha256(im))
        return hashes


def main():
    warnings.simplefilter("ignore")  # Pillow warns about the invalid APNGs it reads as stills
    references = {}
    for name in sorted(os.listdir(FIXTURES)):
        if not name.endswith(".png"):
            continue
        path = os.path.join(FIXTURES, name)
        data = open(path, "rb").read()
        entry = {}
        try:
            with Image.open(path) as im:
                n = im.n_frames - (1 if im.info.get("default_image") else 0)
            pillow = pillow_frames(path, n)
        except Exception as e:  # Pillow refuses the file: record why
            entry["pillow_error"] = f"{type(e).__name__}: {e}"
            pillow = None
        anim = animation(data)
        if pillow is not None and anim is not None:
            ihdr, plte, trns, num_plays, frames = anim
            ours = composite(ihdr, plte, trns, frames)
            entry["loop_count"] = num_plays
            entry["frames"] = [h for h, _ in ours]
            entry["delays_ms"] = [d for _, d in ours]
            entry["pillow_agrees"] = [a == b for (a, _), b in zip(ours, pillow)]
        elif pillow is not None:
            with Image.open(path) as im:
                entry["still"] = premultiplied_sha256(im)
        references[name] = entry
    doc = {
        "about": "Made by scripts/apng_references.py with Pillow %s; see the script." % PIL.__version__,
        "files": references,
    }
    with open(os.path.join(FIXTURES, "references.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    disagree = {k: v["pillow_agrees"] for k, v in references.items() if not all(v.get("pillow_agrees", [True]))}
    print(f"{len(references)} files; frames where Pillow's reader differs: {disagree}", file=sys.stderr)


if __name__ == "__main__":
    main()
