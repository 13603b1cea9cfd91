#!/usr/bin/env python3
"""Writes Tests/Fixtures/orientation/: PNGs and WebPs with EXIF orientations 1...8.

An independent writer (Pillow) stores the same 5x3 opaque picture in each file with an
EXIF block holding only the orientation tag: PNG in an eXIf chunk, WebP (lossless) in an
EXIF chunk of an extended (VP8X) file. expected.json holds the stored pixels and, for each
orientation, the upright pixels Pillow's ImageOps.exif_transpose makes of the file, which
the decode tests compare ImageKit's output with.

Made with Pillow 13.0.0 (pip install pillow==13.0.0):
    python3 scripts/make_orientation_fixtures.py
"""
import json
import pathlib

from PIL import Image, ImageOps

OUT = pathlib.Path(__file__).resolve().parent.parent / "Tests" / "Fixtures" / "orientation"
WIDTH, HEIGHT = 5, 3


def picture():
    img = Image.new("RGB", (WIDTH, HEIGHT))
    img.putdata([(40 * x + 20, 70 * y + 10, (x * 37 + y * 91) % 256)
                 for y in range(HEIGHT) for x in range(WIDTH)])
    return img


def rgba(img):
    img = img.convert("RGBA")
    return {"width": img.width, "height": img.height, "rgba": img.tobytes().hex()}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    img = picture()
    expected = {"pillow": Image.__version__, "stored": rgba(img), "oriented": {}}
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        png = OUT / f"orientation-{orientation}.png"
        webp = OUT / f"orientation-{orientation}.webp"
        img.save(png, exif=exif)
        img.save(webp, exif=exif, lossless=True)
        upright = {}
        for path in (png, webp):
            with Image.open(path) as f:
                assert f.getexif().get(0x0112) == orientation, path
                upright[path.suffix] = rgba(ImageOps.exif_transpose(f))
        assert upright[".png"] == upright[".webp"]
        expected["oriented"][str(orientation)] = upright[".png"]
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
