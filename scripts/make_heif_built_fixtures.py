#!/usr/bin/env python3
"""Makes Tests/Fixtures/heic-built: HEIF files assembled box by box around pictures that
heif-enc (Debian's libheif-examples, libheif 1.15 with x265) encodes, for HEIFDecodeTests.

- grid-2x2.heic: a 128x128 grid of four 64x64 tiles (one coded item listed four times), a
  flat (200, 30, 30) picture: a grid libheif decodes, the control for the two below.
- grid-is-its-own-tile.heic: the same grid with its own id as its second tile; libheif 1.15
  recurses until the stack overflows.
- each-the-others-alpha.heic: two 64x64 pictures, each the other's alpha (auxl, auxC); libheif
  1.15 decodes one's alpha, that one's alpha, and so on until the stack overflows.
- grid-tiles-overdraw-canvas.heic: a 40x40 grid of 40 x 40 tiles, each the 64x64 picture behind
  an ispe of 1x1, so every tile starts inside the canvas: libheif 1.15 decodes 1600 pictures
  (6.5 M pixels) for 1600 pixels shown (a file of 3 KB; at 250 x 250 tiles of larger pictures,
  minutes).
- 300-items.heic: 300 coded 64x64 pictures, the first primary: libheif 1.15 reads a file's items
  in time that grows with their square (20 000 items: 11 s), so their number is bounded by
  what an image within the decode limits needs.
- sps-larger-than-ispe.heic: a flat 4096x4096 picture whose ispe says 64x64; libde265
  allocates the picture at its SPS's size and libheif 1.15 converts all of it.
- no-sao.heic: heif-enc's file for a 200x120 gradient encoded with x265's SAO filter off
  (-p x265:sao=0): libde265 decodes a picture without SAO into the buffers its decoder's
  allocation functions give, which ImageKit's HEVC plugin (decode/heif/heif_hevc.c) allocates.

usage: scripts/make_heif_built_fixtures.py
"""
import os
import struct
import subprocess
import tempfile

from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "heic-built")


def box(kind, body):
    return struct.pack(">I", 8 + len(body)) + kind + body


def full_box(kind, version, body):
    return box(kind, bytes([version, 0, 0, 0]) + body)


def children(data):
    """The boxes in `data`: (type, body) pairs."""
    at, out = 0, []
    while at + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        out.append((kind, data[at + 8:at + size]))
        at += size
    return out


def encode(width, height, colour):
    """heif-enc's file for a flat picture: (its hvcC body, its coded data, the whole file)."""
    with tempfile.TemporaryDirectory() as tmp:
        png, heic = os.path.join(tmp, "in.png"), os.path.join(tmp, "out.heic")
        Image.new("RGB", (width, height), colour).save(png)
        subprocess.run(["heif-enc", "-q", "50", "-o", heic, png], check=True, stdout=subprocess.DEVNULL)
        data = open(heic, "rb").read()
    meta = dict(children(dict(children(data))[b"meta"][4:]))
    ipco = dict(children(dict(children(meta[b"iprp"]))[b"ipco"]))
    iloc = meta[b"iloc"]
    # heif-enc writes one item: version 0 or 1, offsets and lengths of 4 bytes, one extent.
    sizes, at = iloc[4:6], 8 + 2
    offset_size, length_size, base_size = sizes[0] >> 4, sizes[0] & 15, sizes[1] >> 4
    assert (offset_size, length_size) == (4, 4) and base_size in (0, 4)
    if iloc[0] >= 1:
        at += 2
    at += 2  # data_reference_index
    base = struct.unpack(">I", iloc[at:at + 4])[0] if base_size == 4 else 0
    at += base_size + 2
    offset, length = struct.unpack(">II", iloc[at:at + 8])
    return ipco[b"hvcC"], data[base + offset:base + offset + length], data


def ispe(width, height):
    return full_box(b"ispe", 0, struct.pack(">II", width, height))


def grid_data(rows, columns, width, height):
    return bytes([0, 0, rows - 1, columns - 1]) + struct.pack(">HH", width, height)


def assemble(items, primary, references):
    """A HEIF file: items are (id, type, properties, data); a grid's data goes to idat, a
    coded item's to mdat; references are (type, from, [to, ...])."""
    ftyp = box(b"ftyp", b"heic" + b"\0\0\0\0" + b"mif1heic")
    hdlr = full_box(b"hdlr", 0, b"\0" * 4 + b"pict" + b"\0" * 12 + b"\0")
    pitm = full_box(b"pitm", 0, struct.pack(">H", primary))
    iinf = full_box(b"iinf", 0, struct.pack(">H", len(items)) + b"".join(
        full_box(b"infe", 2, struct.pack(">HH", i, 0) + kind + b"\0") for i, kind, _, _ in items))
    properties, associations = [], []
    for i, _, props, _ in items:
        indices = []
        for p in props:
            if p not in properties:
                properties.append(p)
            indices.append(properties.index(p) + 1)
        associations.append((i, indices))
    ipma = full_box(b"ipma", 0, struct.pack(">I", len(associations)) + b"".join(
        struct.pack(">HB", i, len(ix)) + bytes(0x80 | x for x in ix) for i, ix in associations))
    iprp = box(b"iprp", box(b"ipco", b"".join(properties)) + ipma)
    iref = full_box(b"iref", 0, b"".join(
        box(kind, struct.pack(">HH", source, len(to)) + b"".join(struct.pack(">H", t) for t in to))
        for kind, source, to in references))
    idat = box(b"idat", b"".join(d for _, kind, _, d in items if kind == b"grid"))

    def meta(mdat_start):
        entries, in_idat, in_mdat = [], 0, mdat_start
        for i, kind, _, d in items:
            if kind == b"grid":
                entries.append(struct.pack(">HHHHII", i, 1, 0, 1, in_idat, len(d)))
                in_idat += len(d)
            else:
                entries.append(struct.pack(">HHHHII", i, 0, 0, 1, in_mdat, len(d)))
                in_mdat += len(d)
        iloc = full_box(b"iloc", 1, bytes([0x44, 0x00]) + struct.pack(">H", len(items)) + b"".join(entries))
        return full_box(b"meta", 0, hdlr + pitm + iinf + iloc + iref + iprp + idat)

    mdat_start = len(ftyp) + len(meta(0)) + 8
    mdat = box(b"mdat", b"".join(d for _, kind, _, d in items if kind != b"grid"))
    return ftyp + meta(mdat_start) + mdat


def encode_without_sao():
    """heif-enc's file for a 200x120 gradient, SAO off."""
    with tempfile.TemporaryDirectory() as tmp:
        png, heic = os.path.join(tmp, "in.png"), os.path.join(tmp, "out.heic")
        Image.radial_gradient("L").resize((200, 120)).convert("RGB").save(png)
        subprocess.run(["heif-enc", "-q", "60", "-p", "x265:sao=0", "-o", heic, png], check=True,
                       stdout=subprocess.DEVNULL)
        return open(heic, "rb").read()


def main():
    os.makedirs(OUT, exist_ok=True)
    hvcc, tile, _ = encode(64, 64, (200, 30, 30))
    coded = box(b"hvcC", hvcc)

    def write(name, data):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)

    write("grid-2x2.heic", assemble([(1, b"grid", [ispe(128, 128)], grid_data(2, 2, 128, 128)),
                                     (2, b"hvc1", [coded, ispe(64, 64)], tile)], 1, [(b"dimg", 1, [2, 2, 2, 2])]))
    write("grid-is-its-own-tile.heic", assemble([(1, b"grid", [ispe(128, 128)], grid_data(2, 2, 128, 128)),
                                                 (2, b"hvc1", [coded, ispe(64, 64)], tile)], 1, [(b"dimg", 1, [2, 1, 2, 2])]))
    write("grid-tiles-overdraw-canvas.heic", assemble([(1, b"grid", [ispe(40, 40)], grid_data(40, 40, 40, 40)),
                                                       (2, b"hvc1", [coded, ispe(1, 1)], tile)], 1, [(b"dimg", 1, [2] * 1600)]))
    alpha = full_box(b"auxC", 0, b"urn:mpeg:hevc:2015:auxid:1\0")
    write("each-the-others-alpha.heic", assemble([(1, b"hvc1", [coded, ispe(64, 64), alpha], tile),
                                                  (2, b"hvc1", [coded, ispe(64, 64), alpha], tile)], 1,
                                                 [(b"auxl", 1, [2]), (b"auxl", 2, [1])]))
    write("300-items.heic", assemble([(i, b"hvc1", [coded, ispe(64, 64)], tile) for i in range(1, 301)], 1, []))
    _, _, big = encode(4096, 4096, (120, 130, 140))
    at = big.find(b"ispe")
    assert at > 0 and big.count(b"ispe") == 1
    write("sps-larger-than-ispe.heic", big[:at + 8] + struct.pack(">II", 64, 64) + big[at + 16:])
    write("no-sao.heic", encode_without_sao())


if __name__ == "__main__":
    main()
