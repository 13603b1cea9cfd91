#!/usr/bin/env python3
"""Writes Tests/Fixtures/heic/references.json and Tests/Fixtures/jxl/references.json: the
expected pixels of every fixture, from the reference tools of the two libraries, for
HEIFDecodeTests and JXLDecodeTests.

HEIC: heif-convert (libheif-examples 1.15.1, the same libheif and the same conversion ImageKit
uses) writes a PNG of the primary image with its transformations applied; every file is
compared bit-exactly. A file of more than 8 bits (MIAF002.heic: 10) is decoded to 16 bits by a
second implementation, pillow-heif (its own libheif, a later version), whose samples hold the
coded value v of b bits shifted up (v << (16 - b)); each is rounded to 8 bits here as ImageKit
does, round(v * 255 / (2^b - 1)) = (v * 255 + (2^b - 1) // 2) // (2^b - 1). heif-convert's
16-bit PNG (samples v << 6 | v >> 4 at 10 bits), which Pillow reads as 8 bits by keeping the
high byte, v >> (b - 8), must equal pillow-heif's v truncated the same way: the two decoders
agree, and the truncation (libheif's own 8-bit output) is what ImageKit no longer does.

JPEG XL: djxl (libjxl-tools 0.7.0) with --bits_per_sample=8, and for XYB images
--color_space=RGB_D65_SRG_Per_SRG (sRGB, the output ImageKit asks libjxl for); animations are
written as APNG, read frame by frame with Pillow (djxl's frames are full, coalesced canvases).
A PNG that djxl tags with a non-sRGB ICC profile is converted to sRGB with Pillow's ImageCms
(Little CMS, perceptual intent with black-point compensation, as ImageKit does), and that file
is compared by PSNR against the stored converted reference (two colour pipelines). An image
whose alpha is associated comes from libjxl, and from djxl, with premultiplied colour: it is
hashed as it is, its colour clamped to its alpha as ImageKit does. djxl 0.7 refuses 8-bit output when alpha's depth differs from colour's; those
files are read from a PAM of more bits and rounded here (djxl 0.7 writes such a PAM with
samples scaled to 16 bits under the file's MAXVAL).

Pixels are premultiplied with p = (c*a + 127) // 255 and hashed with SHA-256 (rows tightly
packed, frames one after another), as the corpus manifest does. "compare" says how a file
is checked: "exact" (the hash) or "psnr" (at least psnr_min dB against reference_png, a
straight-alpha sRGB PNG next to the fixture, decoded by ImageKit's PNG decoder).

Requires heif-convert and djxl (apt-get install libheif-examples libjxl-tools), Pillow,
pillow-heif and NumPy (pip install pillow pillow-heif numpy). Usage:
python3 scripts/heifjxl_references.py
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pillow_heif
from PIL import Image, ImageCms

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "Tests", "Fixtures")
PSNR_MIN = 45.0

# Associated alpha (the conformance test case's name and description; jxlinfo 0.7 does not say).
JXL_ASSOCIATED_ALPHA = {"alpha_premultiplied.jxl"}

# Files libjxl 0.7 decodes to different last bits on AVX2 and on AVX-512 machines (its highway
# code paths round differently): a hash taken on one fails on the other, so they compare by PSNR.
JXL_SIMD_DEPENDENT = {"opsin_inverse.jxl"}


def premultiplied(rgba):
    a = rgba[..., 3:4].astype(np.uint32)
    c = (rgba[..., :3].astype(np.uint32) * a + 127) // 255
    return np.concatenate([c.astype(np.uint8), rgba[..., 3:4]], axis=2)


def sha(frames, already_premultiplied=False):
    h = hashlib.sha256()
    for f in frames:
        h.update(np.ascontiguousarray(f if already_premultiplied else premultiplied(f)).tobytes())
    return h.hexdigest()


def to_srgb(rgba, icc):
    """Converts straight RGBA8 in the space of `icc` to sRGB (perceptual, black-point
    compensation), alpha kept."""
    src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    dst = ImageCms.createProfile("sRGB")
    grey = icc[16:20] == b"GRAY"  # a grey profile applies to the grey value (R = G = B)
    mode = "L" if grey else "RGB"
    pixels = Image.fromarray(np.ascontiguousarray(rgba[..., 0] if grey else rgba[..., :3]), mode)
    t = ImageCms.buildTransform(src, dst, mode, "RGB", ImageCms.Intent.PERCEPTUAL,
                                ImageCms.Flags.BLACKPOINTCOMPENSATION)
    out = np.asarray(ImageCms.applyTransform(pixels, t))
    return np.dstack([out, rgba[..., 3]])


def save_reference(rgba, path):
    Image.fromarray(np.ascontiguousarray(rgba), "RGBA").save(path, optimize=True)


def heic_references():
    d = os.path.join(FIXTURES, "heic")
    files = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith((".heic", ".heif")):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.png")
            subprocess.run(["heif-convert", os.path.join(d, name), out], check=True,
                           stdout=subprocess.DEVNULL)
            if not os.path.exists(out):
                # Several top-level images: heif-convert numbers them in the order heif-info
                # lists them; the primary is the one heif-info marks.
                out = os.path.join(tmp, "out-%d.png" % primary_index(os.path.join(d, name)))
            im = Image.open(out)
            im.load()
            # Pillow reads a 16-bit RGB(A) PNG as 8 bits by keeping each sample's high byte.
            rgba = np.asarray(im.convert("RGBA"))
        entry = {"width": int(rgba.shape[1]), "height": int(rgba.shape[0])}
        deep = heif_16bit(os.path.join(d, name))
        if deep is not None:
            v, bits = deep
            if not np.array_equal(v >> (bits - 8), rgba):
                sys.exit("%s: pillow-heif and heif-convert disagree" % name)
            top = (1 << bits) - 1
            rgba = ((v * 255 + top // 2) // top).astype(np.uint8)
            entry["note"] = ("%d-bit: pillow-heif's 16-bit decode rounded here, (v * 255 + %d) // %d; "
                             "heif-convert's output equals it truncated (v >> %d)" % (bits, top // 2, top, bits - 8))
        entry["sha256"] = sha([rgba])
        entry["compare"] = "exact"
        files[name] = entry
    usage = subprocess.run(["heif-convert", "--help"], capture_output=True, text=True)
    version = (usage.stdout + usage.stderr).split("libheif version:")[1].split()[0]
    about = ("Made by scripts/heifjxl_references.py with heif-convert (libheif %s) and, above 8 bits, "
             "pillow-heif %s (libheif %s); see the script."
             % (version, pillow_heif.__version__, pillow_heif.libheif_version()))
    write(os.path.join(d, "references.json"), about, files)


def heif_16bit(path):
    """The primary image's coded RGBA samples (uint32, alpha at the maximum without an alpha
    plane) and their depth, from pillow-heif's 16-bit decode; None for an 8-bit image."""
    heif = pillow_heif.open_heif(path, convert_hdr_to_8bit=False)
    bits = heif.info["bit_depth"]
    if bits <= 8:
        return None
    samples = np.asarray(heif).astype(np.uint32)
    shift = 16 - bits
    if (samples & ((1 << shift) - 1)).any():
        sys.exit("%s: pillow-heif's samples are not %d-bit values shifted up" % (path, bits))
    v = samples >> shift
    if v.shape[2] == 3:
        v = np.dstack([v, np.full(v.shape[:2], (1 << bits) - 1, np.uint32)])
    return v, bits


def read_pam8(path):
    """RGBA8 from a PAM of any MAXVAL, rounded (v * 255 / MAXVAL)."""
    data = open(path, "rb").read()
    end = data.index(b"ENDHDR\n") + 7
    head = dict(l.split(" ", 1) for l in data[:end].decode().splitlines() if " " in l)
    w, h, depth, maxval = (int(head[k]) for k in ("WIDTH", "HEIGHT", "DEPTH", "MAXVAL"))
    dtype = np.dtype(">u2") if maxval > 255 else np.uint8
    v = np.frombuffer(data[end:], dtype)[:w * h * depth].reshape(h, w, depth).astype(np.float64)
    if v.max() > maxval:
        # djxl 0.7 writes samples scaled to 16 bits under a smaller MAXVAL.
        maxval = 65535
    v8 = np.clip(np.rint(v * 255.0 / maxval), 0, 255).astype(np.uint8)
    if depth == 3:
        v8 = np.dstack([v8, np.full((h, w), 255, np.uint8)])
    return v8


def primary_index(path):
    """1-based position of the primary image among the top-level images heif-info lists."""
    lines = subprocess.run(["heif-info", path], capture_output=True, text=True).stdout.splitlines()
    images = [l for l in lines if l.startswith("image: ")]
    return next(i + 1 for i, l in enumerate(images) if l.rstrip().endswith("primary"))


def jxl_references():
    d = os.path.join(FIXTURES, "jxl")
    files = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".jxl"):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.png")
            args = ["djxl", os.path.join(d, name), out, "--bits_per_sample=8", "--num_threads=0", "--quiet"]
            xyb, grey = xyb_grey(os.path.join(d, name))
            if xyb:
                args.append("--color_space=" + ("Gra_D65_Per_SRG" if grey else "RGB_D65_SRG_Per_SRG"))
            wrote = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            why = note = None
            frames, delays, loop, icc = [], [], None, None
            if wrote.returncode == 0:
                im = Image.open(out)
                loop = im.info.get("loop")
                for i in range(getattr(im, "n_frames", 1)):
                    im.seek(i)
                    frames.append(np.asarray(im.convert("RGBA")).copy())
                    delays.append(int(im.info.get("duration", 0)))
                icc = Image.open(out).info.get("icc_profile")
            else:
                # djxl 0.7 refuses 8-bit output when alpha's depth differs from colour's: a PAM
                # at the source's depth (or 16 bits when djxl refuses that too), rounded here.
                pam = os.path.join(tmp, "out.pam")
                for depth in ([], ["--bits_per_sample=16"]):
                    if subprocess.run(["djxl", args[1], pam] + depth + args[4:],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                        break
                frames.append(read_pam8(pam))
                note = ("djxl 0.7 writes no 8-bit output for this file: a PAM of more bits, rounded "
                        "here (the same values as libjxl's own 8-bit output for this file)")
        entry = {"width": int(frames[0].shape[1]), "height": int(frames[0].shape[0]),
                 "frames": len(frames)}
        if len(frames) > 1:
            entry.update(delays_ms=delays, loop_count=loop)
        converted = frames
        if icc and not is_srgb(icc):
            converted = [to_srgb(f, icc) for f in frames]
            why = "djxl's PNG carries a non-sRGB ICC profile: converted here with Pillow's ImageCms"
        if name in JXL_SIMD_DEPENDENT:
            why = ("libjxl 0.7 decodes this XYB file to different last bits on AVX2 and AVX-512 machines "
                   "(its highway code paths round differently): compared by PSNR against djxl's output")
        # Associated alpha: libjxl returns premultiplied colour, and djxl writes it as it is.
        # ImageKit clamps such colour to its alpha (lossy colour can exceed it); so does this.
        if name in JXL_ASSOCIATED_ALPHA:
            converted = [np.dstack([np.minimum(f[..., :3], f[..., 3:4]), f[..., 3]]) for f in converted]
        entry["sha256"] = sha(converted, already_premultiplied=name in JXL_ASSOCIATED_ALPHA)
        if note:
            entry["note"] = note
        if why:
            ref = name.rsplit(".", 1)[0] + ".ref.png"
            save_reference(np.concatenate(converted, axis=0), os.path.join(d, ref))
            entry.update(compare="psnr", psnr_min=PSNR_MIN, reference_png=ref, why=why)
        else:
            entry["compare"] = "exact"
        files[name] = entry
    about = "Made by scripts/heifjxl_references.py with djxl (libjxl 0.7.0); see the script."
    write(os.path.join(d, "references.json"), about, files)


def is_srgb(icc):
    """Whether a profile converts to sRGB as the identity (within one level on a grid)."""
    grid = np.stack(np.meshgrid(*[np.arange(0, 256, 17, dtype=np.uint8)] * 3), -1).reshape(-1, 1, 3)
    rgba = np.dstack([grid, np.full(grid.shape[:2], 255, np.uint8)])
    try:
        out = to_srgb(rgba, icc)
    except (OSError, ImageCms.PyCMSError):
        return False
    return int(np.abs(out.astype(int) - rgba.astype(int)).max()) <= 1


def xyb_grey(path):
    """Whether the image is XYB-encoded (jxlinfo 0.7 calls those "lossy"), and whether grey."""
    out = subprocess.run(["jxlinfo", path], capture_output=True, text=True).stdout
    return ", lossy," in out, "GRAY" in out or "Grayscale" in out


def write(path, about, files):
    with open(path, "w") as f:
        json.dump({"about": about, "files": files}, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", os.path.relpath(path), len(files), "files")


if __name__ == "__main__":
    heic_references()
    jxl_references()
    sys.exit(0)
