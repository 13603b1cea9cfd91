import Foundation
import ImageKit
import XCTest

/// OverlayTransformer (ic_composite) against a double-precision reference of Porter-Duff
/// "over" on premultiplied pixels, placed by gravity and imgproxy's offsets, once or tiled;
/// and against `vips composite2`.
final class OverlayTests: XCTestCase {
    /// The mark's top-left corner by the definition: the gravity's place (the window against
    /// the edge it names, centred otherwise, or centred on a focal point as far as it stays
    /// inside), rounded half up, moved away from a named edge by the offset (right and down
    /// along a centred axis).
    private func origin(width: Int, height: Int, mark: Image, gravity: Gravity, dx: Int, dy: Int) -> (Int, Int) {
        func axis(_ outer: Int, _ inner: Int, _ edge: Double?, focus: Double?, _ offset: Int) -> Int {
            let d = Double(outer - inner)
            var v: Double
            if let focus {
                v = min(max(focus * Double(outer) - Double(inner) / 2, min(0, d)), max(0, d))
            } else {
                v = d * (edge ?? 0.5)
            }
            v = (v + 0.5).rounded(.down)
            return Int(v) + (edge == 1 ? -offset : offset)
        }
        let (ex, ey): (Double?, Double?)
        switch gravity {
        case .north: (ex, ey) = (nil, 0)
        case .northEast: (ex, ey) = (1, 0)
        case .east: (ex, ey) = (1, nil)
        case .southEast: (ex, ey) = (1, 1)
        case .south: (ex, ey) = (nil, 1)
        case .southWest: (ex, ey) = (0, 1)
        case .west: (ex, ey) = (0, nil)
        case .northWest: (ex, ey) = (0, 0)
        default: (ex, ey) = (nil, nil)
        }
        var fx: Double?, fy: Double?
        if case .focalPoint(let x, let y) = gravity { (fx, fy) = (x, y) }
        return (axis(width, mark.width, ex, focus: fx, dx), axis(height, mark.height, ey, focus: fy, dy))
    }

    /// The composite, unrounded: every base pixel under the mark (or a tile of it) becomes
    /// mark · o + base · (1 − alpha_mark · o / 255).
    private func reference(_ base: Image, frame: Int = 0, mark: Image, gravity: Gravity = .southEast, dx: Int = 0,
                           dy: Int = 0, opacity: Double = 1, tile: Int? = nil) -> [Double] {
        let b = ColorOpsCheck.samples(base, frame: frame), m = ColorOpsCheck.samples(mark)
        let w = base.width, h = base.height, mw = mark.width, mh = mark.height
        let (x0, y0) = origin(width: w, height: h, mark: mark, gravity: gravity, dx: dx, dy: dy)
        var out = b
        for y in 0..<h {
            for x in 0..<w {
                var mx = x - x0, my = y - y0
                if let tile {
                    mx = ((mx % (mw + tile)) + mw + tile) % (mw + tile)
                    my = ((my % (mh + tile)) + mh + tile) % (mh + tile)
                }
                guard (0..<mw).contains(mx), (0..<mh).contains(my) else { continue }
                let i = (y * w + x) * 4, j = (my * mw + mx) * 4
                let keep = 1 - m[j + 3] * opacity / 255
                for c in 0..<4 { out[i + c] = m[j + c] * opacity + b[i + c] * keep }
            }
        }
        return out
    }

    private func check(_ base: Image, _ overlay: OverlayTransformer, _ what: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let out = try overlay.transform(base)
        let expected = reference(base, mark: overlay.mark, gravity: overlay.gravity, dx: overlay.offsetX,
                                 dy: overlay.offsetY, opacity: overlay.opacity, tile: overlay.tileSpacing)
        XCTAssertLessThanOrEqual(ColorOpsCheck.maxError(out, reference: expected), 1, what, file: file, line: line)
        ColorOpsCheck.assertPremultiplied(out, file: file, line: line)
        if base.isOpaque { XCTAssertTrue(out.isOpaque, what, file: file, line: line) }
    }

    func testMatchesReferenceForOpaqueAndTransparentImagesAndMarks() throws {
        for baseAlpha in [false, true] {
            let base = try ColorOpsCheck.photo(width: 67, height: 45, alpha: baseAlpha)
            for markAlpha in [false, true] {
                let mark = try ColorOpsCheck.photo(width: 23, height: 17, alpha: markAlpha, seed: 9)
                for opacity in [0, 0.3, 0.5, 0.77, 1] {
                    try check(base, OverlayTransformer(mark: mark, markKey: "m", offset: (x: 3, y: 2), opacity: opacity),
                              "base alpha \(baseAlpha), mark alpha \(markAlpha), opacity \(opacity)")
                }
            }
        }
    }

    func testTransparentBaseUnderTheMarkGetsTheMarkNotADarkFringe() throws {
        // Half-transparent red (premultiplied 128, 0, 0, 128) over a fully transparent base at
        // full opacity stays exactly that; at half opacity, a quarter-alpha red.
        let base = try Image(width: 2, height: 1, premultipliedRGBA: [UInt8](repeating: 0, count: 8))
        let mark = try Image(width: 1, height: 1, premultipliedRGBA: [128, 0, 0, 128])
        let out = try OverlayTransformer(mark: mark, markKey: "red", gravity: .west).transform(base)
        XCTAssertEqual(out.packedPixels(), [128, 0, 0, 128, 0, 0, 0, 0])
        let half = try OverlayTransformer(mark: mark, markKey: "red", gravity: .west, opacity: 0.5).transform(base)
        XCTAssertEqual(half.packedPixels(), [64, 0, 0, 64, 0, 0, 0, 0])
        XCTAssertFalse(half.isOpaque)
    }

    func testEveryGravityAndOffsetPlacesTheMark() throws {
        let base = try ColorOpsCheck.photo(width: 61, height: 40, alpha: true)
        let mark = try ColorOpsCheck.photo(width: 14, height: 9, alpha: true, seed: 5)
        let gravities: [Gravity] = [.center, .north, .northEast, .east, .southEast, .south, .southWest, .west,
                                    .northWest, .focalPoint(x: 0.2, y: 0.9), .focalPoint(x: 1, y: 0)]
        for gravity in gravities {
            for offset in [(0, 0), (5, -3), (-7, 11)] {
                try check(base, OverlayTransformer(mark: mark, markKey: "m", gravity: gravity, offset: offset,
                                                   opacity: 0.8), "\(gravity) offset \(offset)")
            }
        }
        // Where exactly: an opaque 20x10 mark on a transparent 100x80 image.
        let clear = try Image(width: 100, height: 80, premultipliedRGBA: [UInt8](repeating: 0, count: 100 * 80 * 4))
        let white = try Image(width: 20, height: 10, premultipliedRGBA: [UInt8](repeating: 255, count: 20 * 10 * 4))
        let expected: [(Gravity, (Int, Int), (Int, Int))] = [
            (.southEast, (10, 10), (70, 60)), (.northWest, (10, 10), (10, 10)), (.northEast, (3, 4), (77, 4)),
            (.southWest, (3, 4), (3, 66)), (.center, (0, 0), (40, 35)), (.center, (5, -5), (45, 30)),
            (.north, (2, 6), (42, 6)), (.east, (2, 6), (78, 41)),
        ]
        for (gravity, offset, corner) in expected {
            let out = try OverlayTransformer(mark: white, markKey: "w", gravity: gravity, offset: offset).transform(clear)
            XCTAssertEqual(opaqueBox(out), [corner.0, corner.1, 20, 10], "\(gravity) \(offset)")
        }
    }

    /// x, y, width and height of the pixels with alpha 255.
    private func opaqueBox(_ image: Image) -> [Int] {
        let px = image.packedPixels()
        let xs = (0..<image.width * image.height).filter { px[$0 * 4 + 3] == 255 }
        guard let first = xs.first, let last = xs.last else { return [] }
        let cols = xs.map { $0 % image.width }
        return [cols.min()!, first / image.width, cols.max()! - cols.min()! + 1, last / image.width - first / image.width + 1]
    }

    func testMarksPartlyOrWhollyOutsideAreClipped() throws {
        let base = try ColorOpsCheck.photo(width: 40, height: 30, alpha: false)
        let small = try ColorOpsCheck.photo(width: 16, height: 12, alpha: true, seed: 4)
        let large = try ColorOpsCheck.photo(width: 70, height: 50, alpha: true, seed: 6)
        for (mark, offset) in [(small, (-8, -5)), (small, (30, 25)), (small, (-100, 0)), (small, (0, 1000)),
                               (large, (0, 0)), (large, (12, -9))] {
            for gravity in [Gravity.southEast, .northWest, .center] {
                try check(base, OverlayTransformer(mark: mark, markKey: "m", gravity: gravity, offset: offset,
                                                   opacity: 0.6), "\(mark.width) px at \(gravity) \(offset)")
            }
        }
        let outside = try OverlayTransformer(mark: small, markKey: "m", offset: (x: 500, y: 0)).transform(base)
        XCTAssertEqual(outside.packedPixels(), base.packedPixels())
    }

    func testTilingWithSpacing() throws {
        let base = try ColorOpsCheck.photo(width: 90, height: 70, alpha: true)
        let mark = try ColorOpsCheck.photo(width: 13, height: 8, alpha: true, seed: 7)
        for spacing in [0, 1, 6, 200] {
            for gravity in [Gravity.northWest, .southEast, .center] {
                try check(base, OverlayTransformer(mark: mark, markKey: "m", gravity: gravity, offset: (x: 4, y: -2),
                                                   opacity: 0.7, tile: spacing), "tile \(spacing) at \(gravity)")
            }
        }
        // An opaque mark tiled without gaps at full opacity covers everything: the result is opaque.
        let clear = try Image(width: 30, height: 20, premultipliedRGBA: [UInt8](repeating: 0, count: 30 * 20 * 4))
        let white = try Image(width: 7, height: 3, premultipliedRGBA: [UInt8](repeating: 255, count: 7 * 3 * 4))
        let covered = try OverlayTransformer(mark: white, markKey: "w", tile: 0).transform(clear)
        XCTAssertTrue(covered.isOpaque)
        XCTAssertEqual(Set(covered.packedPixels()), [255])
        let gappy = try OverlayTransformer(mark: white, markKey: "w", gravity: .northWest, tile: 2).transform(clear)
        XCTAssertFalse(gappy.isOpaque)
        XCTAssertEqual(gappy.packedPixels()[(0 * 30 + 7) * 4 + 3], 0, "the gap after the first tile")
        XCTAssertEqual(gappy.packedPixels()[(0 * 30 + 9) * 4 + 3], 255, "the second tile")
        XCTAssertEqual(gappy.packedPixels()[(4 * 30 + 0) * 4 + 3], 0, "the gap below the first row of tiles")
        XCTAssertEqual(gappy.packedPixels()[(5 * 30 + 0) * 4 + 3], 255, "the second row of tiles")
    }

    func testScaleSizesTheMarkToAFractionOfTheWidth() throws {
        let base = try ColorOpsCheck.photo(width: 96, height: 64, alpha: false)
        let mark = try ColorOpsCheck.photo(width: 40, height: 20, alpha: true, seed: 8)
        let overlay = OverlayTransformer(mark: mark, markKey: "m", offset: (x: 2, y: 3), opacity: 0.9, scale: 0.25)
        let scaled = try ImageResizer(size: PixelSize(width: 24, height: 12), mode: .stretch).resize(mark)
        let expected = reference(base, mark: scaled, dx: 2, dy: 3, opacity: 0.9)
        XCTAssertLessThanOrEqual(ColorOpsCheck.maxError(try overlay.transform(base), reference: expected), 1)
        let clear = try Image(width: 100, height: 50, premultipliedRGBA: [UInt8](repeating: 0, count: 100 * 50 * 4))
        let white = try Image(width: 10, height: 4, premultipliedRGBA: [UInt8](repeating: 255, count: 10 * 4 * 4))
        let big = try OverlayTransformer(mark: white, markKey: "w", gravity: .northWest, scale: 0.5).transform(clear)
        XCTAssertEqual(opaqueBox(big), [0, 0, 50, 20])
    }

    func testEveryFrameOfAnAnimationGetsTheSameMark() throws {
        let mark = try ColorOpsCheck.photo(width: 9, height: 7, alpha: true, seed: 2)
        try ColorOpsCheck.assertFramesAlike(OverlayTransformer(mark: mark, markKey: "m", opacity: 0.6))
        try ColorOpsCheck.assertFramesAlike(OverlayTransformer(mark: mark, markKey: "m", opacity: 0.6, tile: 3))
    }

    func testBadParametersFail() throws {
        let base = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        let mark = try ColorOpsCheck.photo(width: 4, height: 4, alpha: true)
        let bad: [OverlayTransformer] = [
            OverlayTransformer(mark: mark, markKey: "m", opacity: -0.1),
            OverlayTransformer(mark: mark, markKey: "m", opacity: 1.01),
            OverlayTransformer(mark: mark, markKey: "m", opacity: .nan),
            OverlayTransformer(mark: mark, markKey: "m", opacity: .infinity),
            OverlayTransformer(mark: mark, markKey: "m", scale: 0),
            OverlayTransformer(mark: mark, markKey: "m", scale: -0.5),
            OverlayTransformer(mark: mark, markKey: "m", scale: .nan),
            OverlayTransformer(mark: mark, markKey: "m", scale: .infinity),
            OverlayTransformer(mark: mark, markKey: "m", scale: 2_000_000),
            OverlayTransformer(mark: mark, markKey: "m", tile: -1),
            OverlayTransformer(mark: mark, markKey: "m", tile: 65537),
            OverlayTransformer(mark: mark, markKey: "m", gravity: .smart),
            OverlayTransformer(mark: mark, markKey: "m", gravity: .focalPoint(x: 1.5, y: 0)),
            OverlayTransformer(mark: mark, markKey: "m", offset: (x: 2_000_000, y: 0)),
            OverlayTransformer(mark: mark, markKey: "m", offset: (x: 0, y: Int.min)),
            OverlayTransformer(mark: mark, markKey: ""),
            OverlayTransformer(mark: mark, markKey: "a,b"),
            OverlayTransformer(mark: mark, markKey: String(repeating: "x", count: 201)),
        ]
        for overlay in bad {
            XCTAssertThrowsError(try overlay.transform(base), overlay.key) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument, "\(error)")
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("overlay:") ?? false, "\(error)")
            }
        }
    }

    func testACancelledLoadStops() throws {
        let base = try ColorOpsCheck.photo(width: 64, height: 64, alpha: false)
        let mark = try ColorOpsCheck.photo(width: 8, height: 8, alpha: true)
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        XCTAssertThrowsError(try OverlayTransformer(mark: mark, markKey: "m", tile: 1).transform(base, cancellation: cancellation)) {
            XCTAssertEqual(($0 as? ImageKitError)?.code, .cancelled, "\($0)")
        }
    }

    func testKeysAreStableAndDistinctAndNameTheMarkNotItsPixels() throws {
        let mark = try ColorOpsCheck.photo(width: 4, height: 4, alpha: true)
        let other = try ColorOpsCheck.photo(width: 6, height: 6, alpha: false, seed: 11)
        let logo = OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.5, scale: 0.25)
        XCTAssertEqual(logo.key, "overlay(logo-v3,southeast,10,10,0.5,scale=0.25)")
        XCTAssertEqual(OverlayTransformer(mark: mark, markKey: "logo", gravity: .focalPoint(x: 0.5, y: 0.25), tile: 8).key,
                       "overlay(logo,focus(0.5,0.25),0,0,1.0,tile=8)")
        let same = OverlayTransformer(mark: other, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.5, scale: 0.25)
        XCTAssertEqual(logo, same)
        XCTAssertEqual(Set([logo, same]).count, 1)
        let keys = [
            logo.key,
            OverlayTransformer(mark: mark, markKey: "logo-v4", offset: (x: 10, y: 10), opacity: 0.5, scale: 0.25).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", gravity: .south, offset: (x: 10, y: 10), opacity: 0.5,
                               scale: 0.25).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 11), opacity: 0.5, scale: 0.25).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 11, y: 10), opacity: 0.5, scale: 0.25).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.6, scale: 0.25).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.5).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.5, scale: 0.25, tile: 0).key,
            OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.5, scale: 0.25, tile: 4).key,
        ]
        ColorOpsCheck.assertDistinct(keys)
        XCTAssertNotEqual(logo, OverlayTransformer(mark: mark, markKey: "logo-v3", offset: (x: 10, y: 10), opacity: 0.5))
    }

    /// Against `vips composite2 base mark out over --x --y` on a real photo with a mark that has
    /// soft transparency. libvips composites in float on unpremultiplied input (it
    /// premultiplies, blends and unpremultiplies, rounding once at the end); ours blends the
    /// premultiplied 8-bit pixels in fixed point, so they differ by rounding where the mark is
    /// partly transparent. vips composite2 has no opacity: this compares opacity 1.
    func testAgainstLibvipsComposite2() throws {
        let photo = try VipsCommand.photo()
        let mark = try ColorOpsCheck.photo(width: 60, height: 40, alpha: true, seed: 21)
        for (gravity, offset) in [(Gravity.southEast, (10, 10)), (.northWest, (-15, 5))] {
            let ours = try OverlayTransformer(mark: mark, markKey: "m", gravity: gravity, offset: offset).transform(photo)
            let (x, y) = origin(width: photo.width, height: photo.height, mark: mark, gravity: gravity,
                                dx: offset.0, dy: offset.1)
            let vips = try composite2(photo, mark, x: x, y: y)
            let psnr = VipsCommand.colourPSNR(ours, vips)
            print("overlay \(gravity) \(offset) vs vips composite2: \(String(format: "%.2f", psnr)) dB")
            XCTAssertGreaterThanOrEqual(psnr, 35, "\(gravity) \(offset)")
        }
    }

    /// `vips composite2 base.png mark.png out.png over --x X --y Y`, decoded.
    private func composite2(_ base: Image, _ mark: Image, x: Int, y: Int) throws -> Image {
        guard let vips = VipsCommand.path else {
            throw ImageKitError.invalidArgument("vips is not installed: `make deps` installs libvips-tools")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-vips-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let basePNG = dir.appendingPathComponent("base.png"), markPNG = dir.appendingPathComponent("mark.png")
        let output = dir.appendingPathComponent("out.png")
        try ImageEncoder.encode(base, as: .png()).write(to: basePNG)
        try ImageEncoder.encode(mark, as: .png()).write(to: markPNG)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: vips)
        process.arguments = ["composite2", basePNG.path, markPNG.path, output.path, "over", "--x", "\(x)", "--y", "\(y)"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ImageKitError.invalidArgument("vips composite2 exited with \(process.terminationStatus)")
        }
        // vips keeps the photo's three bands; decode gives RGBA with alpha 255.
        return try ImageDecoder().decode(Data(contentsOf: output))
    }
}
