#!/usr/bin/env python3
"""Writes Tests/Fixtures/icc/: ICC profiles the encoder tests embed.

srgb.icc is LittleCMS's built-in sRGB profile, lab.icc its abstract Lab (D50) profile (a
valid ICC profile that does not describe RGB pixels), both written by Pillow's ImageCms
(Pillow 13.0.0 with the LittleCMS it bundles; pip install pillow==13.0.0):
    python3 scripts/make_icc_fixtures.py
"""
import pathlib

from PIL import ImageCms

OUT = pathlib.Path(__file__).resolve().parent.parent / "Tests" / "Fixtures" / "icc"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, space in (("srgb", "sRGB"), ("lab", "LAB")):
        data = ImageCms.ImageCmsProfile(ImageCms.createProfile(space)).tobytes()
        assert int.from_bytes(data[0:4], "big") == len(data) and data[36:40] == b"acsp"
        (OUT / f"{name}.icc").write_bytes(data)


if __name__ == "__main__":
    main()
