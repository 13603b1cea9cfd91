#!/usr/bin/env python3
"""Makes Tests/Fixtures/color: images with embedded ICC profiles and their sRGB
references from a second implementation (libvips's icc_transform).

Needs a C compiler with liblcms2-dev (for color_fixtures/make_profiles.c) and the
`vips` command (Debian's libvips-tools; the committed files were made with 8.14.1).
The pictures are a 96-pixel-wide thumbnail of libjpeg-turbo's testimages/testorig.jpg
(from the corpus, ../shared/corpus); the alpha fixture adds a horizontal alpha ramp.

References: `vips icc_transform IN REF.png srgb --embedded --intent perceptual
--black-point-compensation` (libvips's built-in sRGB profile), saved without the
profile. The tests compare ImageKit's sRGB decode against them (PSNR >= 45 dB).

usage: scripts/make_color_fixtures.py [CORPUS_DIR]
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "color")


def run(*args):
    subprocess.run(args, check=True)


def jpeg_segments(data):
    """Splits a JPEG into (marker, payload) up to SOS, and the rest."""
    assert data[:2] == b"\xff\xd8"
    i, segs = 2, []
    while True:
        marker = data[i + 1]
        if marker == 0xDA:
            return segs, data[i:]
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        segs.append((marker, data[i + 4:i + 2 + length]))
        i += 2 + length


def jpeg_join(segs, rest):
    out = bytearray(b"\xff\xd8")
    for marker, payload in segs:
        out += bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload
    return bytes(out + rest)


def jpeg_with_profile_chunks(jpeg, profile, parts, order):
    """Replaces a JPEG's APP2 ICC segments by `parts` chunks of `profile`, written in `order`."""
    segs, rest = jpeg_segments(jpeg)
    segs = [s for s in segs if not (s[0] == 0xE2 and s[1].startswith(b"ICC_PROFILE\0"))]
    step = -(-len(profile) // parts)
    chunks = [profile[k * step:(k + 1) * step] for k in range(parts)]
    app2 = [(0xE2, b"ICC_PROFILE\0" + bytes([seq + 1, parts]) + chunks[seq]) for seq in order]
    return jpeg_join(segs[:1] + app2 + segs[1:], rest)


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "corpus")
    source = os.path.join(corpus, "libjpeg-turbo", "testimages", "testorig.jpg")
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tool = os.path.join(tmp, "make_profiles")
        run("cc", "-O1", "-o", tool, os.path.join(ROOT, "scripts", "color_fixtures", "make_profiles.c"),
            "-llcms2")
        run(tool, tmp)
        icc = {name: os.path.join(tmp, name + ".icc")
               for name in ("display-p3", "adobe-rgb", "gray-18", "cmyk-naive", "srgb-lcms")}
        base = os.path.join(tmp, "base.v")
        run("vips", "thumbnail", source, base, "96")
        w = 96
        h = int(subprocess.run(["vipsheader", "-f", "height", base], check=True, capture_output=True,
                               text=True).stdout)
        # Straight RGBA with an alpha ramp (255 at the left to 0 at the right).
        ramp = os.path.join(tmp, "ramp.v")
        run("vips", "identity", ramp, "--ushort", "--size", str(w))
        rising = os.path.join(tmp, "rising.v")
        run("vips", "linear", ramp, rising, str(255.0 / (w - 1)), "0", "--uchar")
        alpha = os.path.join(tmp, "alpha.v")
        run("vips", "invert", rising, alpha)
        alpha_full = os.path.join(tmp, "alpha_full.v")
        run("vips", "embed", alpha, alpha_full, "0", "0", str(w), str(h), "--extend", "copy")
        rgba = os.path.join(tmp, "rgba.v")
        run("vips", "bandjoin", f"{base} {alpha_full}", rgba)

        def out(name):
            return os.path.join(OUT, name)

        run("vips", "jpegsave", base, out("p3.jpg"), "--Q", "92", "--profile", icc["display-p3"])
        run("vips", "jpegsave", base, out("adobe-rgb.jpg"), "--Q", "92", "--profile", icc["adobe-rgb"])
        run("vips", "jpegsave", base, out("srgb.jpg"), "--Q", "92", "--profile", icc["srgb-lcms"])
        run("vips", "pngsave", base, out("p3.png"), "--profile", icc["display-p3"])
        run("vips", "pngsave", rgba, out("p3-alpha.png"), "--profile", icc["display-p3"])
        run("vips", "webpsave", base, out("p3.webp"), "--Q", "90", "--profile", icc["display-p3"])
        grey = os.path.join(tmp, "grey.v")
        run("vips", "colourspace", base, grey, "b-w")
        run("vips", "jpegsave", grey, out("gray-18.jpg"), "--Q", "92", "--profile", icc["gray-18"])
        grey_alpha = os.path.join(tmp, "grey_alpha.v")
        run("vips", "bandjoin", f"{grey} {alpha_full}", grey_alpha)
        run("vips", "pngsave", grey_alpha, out("gray-18-alpha.png"), "--profile", icc["gray-18"])
        # CMYK: the naive inverse of the profile's table, C = 1 - R - K etc.
        cmy = os.path.join(tmp, "cmy.v")
        run("vips", "invert", base, cmy)
        k = os.path.join(tmp, "k.v")
        run("vips", "bandrank", cmy, k, "--index", "0")
        cmyk = os.path.join(tmp, "cmyk.v")
        run("vips", "bandjoin", f"{cmy} {k}", cmyk)
        cmyk_typed = os.path.join(tmp, "cmyk_typed.v")
        run("vips", "copy", cmyk, cmyk_typed, "--interpretation", "cmyk")
        run("vips", "jpegsave", cmyk_typed, out("cmyk-naive.jpg"), "--Q", "92", "--profile",
            icc["cmyk-naive"])

        with open(out("p3.jpg"), "rb") as f:
            p3_jpeg = f.read()
        with open(icc["display-p3"], "rb") as f:
            p3_profile = f.read()
        # The profile in three APP2 segments, written out of order (3, 1, 2).
        with open(out("p3-split.jpg"), "wb") as f:
            f.write(jpeg_with_profile_chunks(p3_jpeg, p3_profile, 3, [2, 0, 1]))
        # A profile lcms cannot read: its tag count claims far more tags than there are.
        broken = bytearray(p3_profile)
        broken[128:132] = struct.pack(">I", 0x7FFFFFFF)
        with open(out("corrupt-profile.jpg"), "wb") as f:
            f.write(jpeg_with_profile_chunks(p3_jpeg, bytes(broken), 1, [0]))

        for name in ("p3.jpg", "adobe-rgb.jpg", "p3.png", "p3-alpha.png", "p3.webp", "gray-18.jpg", "gray-18-alpha.png",
                     "cmyk-naive.jpg", "p3-split.jpg"):
            ref = out(name.rsplit(".", 1)[0] + "-" + name.rsplit(".", 1)[1] + ".ref.png")
            run("vips", "icc_transform", out(name), ref + "[strip]", "srgb", "--embedded",
                "--intent", "perceptual", "--black-point-compensation")


if __name__ == "__main__":
    main()
