#!/usr/bin/env python3
"""Makes Tests/Fixtures/avif: AVIF test files and their references from a second decoder.

Files: some are copied from libavif's own test data (a git directory of
github.com/AOMediaCodec/libavif, argument LIBAVIF_GIT_DIR, read with `git show`), the
others are made here with `avifenc` from a 192x128 copy of libavif's
tests/data/io/kodim23_yuv420_8bpc.avif (Kodak, unrestricted): a 12-bit one, one with an
embedded Display P3 ICC profile (the profile of Tests/Fixtures/color/p3.png) and one whose
nclx box says Display P3 (primaries 12, transfer 13) with no profile.

References: every frame is decoded by `avifdec -d 8 --index N` (Debian's libavif-bin, the
same libavif 0.11.1 as ImageKit links, with the same YUV to RGB settings) to a PNG; Pillow
then applies the file's irot (anticlockwise quarter turns) and imir (mode 0: top and bottom
exchanged, 1: left and right) as HEIF orders them, rotation first — read from
`avifdec --info`, not from ImageKit — and premultiplies (round(c * a / 255)). Those pixels'
SHA-256 (rows tightly packed) must equal ImageKit's: same library, same settings, bit-exact.
The two Display P3 files are converted to sRGB by Pillow's own Little CMS (perceptual intent,
black-point compensation, the p3.png profile for both) into `NAME.ref.png`; ImageKit's
conversion (its matrix/shaper path, or the system's lcms) must reach PSNR >= 45 dB.
One more file is compared by PSNR (>= 45 dB, reference `NAME.ref.png`): a 10-bit file with
alpha, which avifdec writes as RGBA through libyuv's fixed-point kernel, while ImageKit
converts every 10/12-bit source with libavif's float path (opaque ones avifdec writes as RGB,
for which libyuv has no 10/12-bit kernel: the float path too, so those are bit-exact).

usage: scripts/make_avif_fixtures.py LIBAVIF_GIT_DIR
"""
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from PIL import Image, ImageCms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "avif")

# (fixture name, path in libavif's tests/data, what it covers)
COPIED = [
    ("kodim03_yuv420_8bpc.avif", "io/kodim03_yuv420_8bpc.avif", "8-bit 4:2:0"),
    ("colors_sdr_srgb.avif", "colors_sdr_srgb.avif", "8-bit 4:4:4"),
    ("cosmos1650_yuv444_10bpc_p3pq.avif", "io/cosmos1650_yuv444_10bpc_p3pq.avif",
     "10-bit 4:4:4, P3 primaries with PQ transfer (HDR: values left untouched)"),
    ("abc_color_irot_alpha_irot.avif", "abc_color_irot_alpha_irot.avif", "alpha, irot on colour and alpha"),
    ("clap_irot_imir_non_essential.avif", "clap_irot_imir_non_essential.avif",
     "10-bit alpha, irot + imir (clap not applied); avifdec converts it with libyuv"),
    ("paris_icc_exif_xmp.avif", "paris_icc_exif_xmp.avif", "an embedded ICC profile (sRGB), EXIF, XMP"),
    ("colors-animated-8bpc.avif", "colors-animated-8bpc.avif", "sequence (avis), 5 frames"),
    ("colors-animated-12bpc-keyframes-0-2-3.avif", "colors-animated-12bpc-keyframes-0-2-3.avif",
     "sequence, 12-bit 4:2:2 limited range with alpha, keyframes 0, 2, 3"),
    ("sofa_grid1x5_420.avif", "sofa_grid1x5_420.avif", "grid of 1x5 cells, 4:2:0"),
    ("white_1x1.avif", "white_1x1.avif", "1x1"),
]
# Files avifdec converts through libyuv's 10-bit kernel (RGBA output): compared by PSNR.
LIBYUV_IN_AVIFDEC = {"clap_irot_imir_non_essential.avif"}
# (fixture name, avifenc arguments, what it covers, converted to sRGB)
MADE = [
    ("kodim23_12bpc_yuv420.avif", ["-d", "12", "-y", "420", "--min", "10", "--max", "10"], "12-bit 4:2:0", False),
    ("kodim23_p3_icc.avif", ["-y", "444", "--icc", "{p3}"], "an embedded Display P3 ICC profile", True),
    ("kodim23_p3_cicp.avif", ["-y", "444", "--cicp", "12/13/6"], "nclx Display P3 (12/13/6), no profile", True),
]


def run(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, **kw)


def transforms(path):
    """(irot angle, imir mode or None) from `avifdec --info`."""
    info = run("avifdec", "--info", path).stdout.decode()
    rot = re.search(r"irot \(Rotation\)\s*:\s*(\d)", info)
    mir = re.search(r"imir \(Mirror\)\s*:\s*Mode (\d)", info)
    return (int(rot.group(1)) if rot else 0, int(mir.group(1)) if mir else None), info


def frame_count(info):
    m = re.search(r"(\d+) frames", info)
    return int(m.group(1)) if m else 1


def oriented(im, angle, mode):
    for _ in range(angle):
        im = im.transpose(Image.Transpose.ROTATE_90)  # anticlockwise
    if mode == 0:
        im = im.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    elif mode == 1:
        im = im.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return im


def premultiplied_sha256(im):
    rgba = im.convert("RGBA").tobytes()
    out = bytearray(rgba)
    for i in range(0, len(out), 4):
        a = out[i + 3]
        if a != 255:
            for c in range(3):
                out[i + c] = (out[i + c] * a * 2 + 255) // 510
    return hashlib.sha256(bytes(out)).hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    git = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    for name, src, _ in COPIED:
        data = run("git", "--git-dir", git, "show", "HEAD:tests/data/" + src).stdout
        open(os.path.join(OUT, name), "wb").write(data)
    p3_profile = Image.open(os.path.join(ROOT, "Tests", "Fixtures", "color", "p3.png")).info["icc_profile"]
    with tempfile.TemporaryDirectory() as tmp:
        src_avif = os.path.join(tmp, "kodim23.avif")
        open(src_avif, "wb").write(run("git", "--git-dir", git, "show",
                                       "HEAD:tests/data/io/kodim23_yuv420_8bpc.avif").stdout)
        run("avifdec", "-d", "8", src_avif, os.path.join(tmp, "kodim23.png"))
        small = os.path.join(tmp, "small.png")
        Image.open(os.path.join(tmp, "kodim23.png")).convert("RGB").resize((192, 128), Image.LANCZOS).save(small)
        p3_path = os.path.join(tmp, "p3.icc")
        open(p3_path, "wb").write(p3_profile)
        for name, args, _, _ in MADE:
            args = [a.replace("{p3}", p3_path) for a in args]
            run("avifenc", "-s", "8", *args, small, os.path.join(OUT, name))

        entries = []
        srgb = ImageCms.createProfile("sRGB")
        p3 = ImageCms.ImageCmsProfile(io.BytesIO(p3_profile))
        files = [(n, what, False) for n, _, what in COPIED] + [(n, what, conv) for n, _, what, conv in MADE]
        for name, what, converted in files:
            path = os.path.join(OUT, name)
            (angle, mode), info = transforms(path)
            frames = frame_count(info)
            hashes = []
            entry = {"file": name, "covers": what, "frames": frames}
            for index in range(frames):
                png = os.path.join(tmp, "%s-%d.png" % (name, index))
                run("avifdec", "-d", "8", "--index", str(index), path, png)
                im = oriented(Image.open(png), angle, mode)
                im.load()
                if converted:
                    rgb = ImageCms.profileToProfile(
                        im.convert("RGB"), p3, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL,
                        outputMode="RGB", flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)
                    ref = name.replace(".avif", ".ref.png")
                    rgb.save(os.path.join(OUT, ref))
                    entry.update({"match": "psnr", "reference": ref, "min_psnr": 45})
                elif name in LIBYUV_IN_AVIFDEC:
                    ref = name.replace(".avif", ".ref.png")
                    im.convert("RGBA").save(os.path.join(OUT, ref))
                    entry.update({"match": "psnr", "reference": ref, "min_psnr": 45})
                else:
                    hashes.append(premultiplied_sha256(im))
                entry["width"], entry["height"] = im.size
            if hashes:
                entry.update({"match": "exact", "sha256": hashes})
            entries.append(entry)
    with open(os.path.join(OUT, "references.json"), "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
