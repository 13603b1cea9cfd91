import ImageKit
import XCTest

/// Padding and extending to an aspect ratio against an exact reference: every pixel of the
/// canvas is the source's pixel or the background's, byte for byte.
final class PaddingTests: XCTestCase {
    private let colors: [Background] = [.transparent, .color(.white), .color(RGBColor(red: 20, green: 90, blue: 200))]

    /// The canvas `width` x `height` with frame `frame` of `image` at (x, y), the rest `background`.
    private func reference(_ image: Image, frame: Int = 0, width: Int, height: Int, x: Int, y: Int,
                           background: Background) -> [UInt8] {
        let src = image.packedPixels(frame: frame)
        let bg: [UInt8]
        switch background {
        case .transparent: bg = [0, 0, 0, 0]
        case .color(let c): bg = [c.red, c.green, c.blue, 255]
        }
        var out = [UInt8]()
        out.reserveCapacity(width * height * 4)
        for row in 0..<height {
            for col in 0..<width {
                let sx = col - x, sy = row - y
                if (0..<image.width).contains(sx) && (0..<image.height).contains(sy) {
                    out += src[(sy * image.width + sx) * 4..<(sy * image.width + sx) * 4 + 4]
                } else {
                    out += bg
                }
            }
        }
        return out
    }

    func testSidesMatchTheReferenceExactly() throws {
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(width: 37, height: 23, alpha: alpha)
            for background in colors {
                for (t, r, b, l) in [(10, 20, 10, 20), (0, 0, 0, 0), (1, 0, 0, 0), (0, 17, 3, 0), (5, 1, 0, 64)] {
                    let out = try PaddingTransformer(top: t, right: r, bottom: b, left: l, background: background)
                        .transform(src)
                    XCTAssertEqual(out.width, 37 + l + r)
                    XCTAssertEqual(out.height, 23 + t + b)
                    XCTAssertEqual(out.packedPixels(), reference(src, width: out.width, height: out.height, x: l, y: t,
                                                                background: background),
                                   "\(t),\(r),\(b),\(l) on \(background), alpha \(alpha)")
                    let bordered = t + r + b + l > 0
                    let opaque = !alpha && (!bordered || background != .transparent)
                    XCTAssertEqual(out.isOpaque, opaque, "\(t),\(r),\(b),\(l) on \(background), alpha \(alpha)")
                    ColorOpsCheck.assertPremultiplied(out)
                }
            }
        }
    }

    func testExtendPlacesTheImageByEveryGravity() throws {
        let src = try ColorOpsCheck.photo(width: 30, height: 20, alpha: true)
        let compass: [(Gravity, Double, Double)] = [
            (.center, 0.5, 0.5), (.north, 0.5, 0), (.northEast, 1, 0), (.east, 1, 0.5), (.southEast, 1, 1),
            (.south, 0.5, 1), (.southWest, 0, 1), (.west, 0, 0.5), (.northWest, 0, 0),
        ]
        // Ratio 1 heightens the 30x20 image to 30x30; 2.25 widens it to 45x20; 4/3 to 30x22.5 → 23.
        for (ratio, width, height) in [(1.0, 30, 30), (2.25, 45, 20), (4.0 / 3, 30, 23), (1.5, 30, 20)] {
            for (gravity, fx, fy) in compass {
                let out = try PaddingTransformer(aspectRatio: ratio, gravity: gravity, background: .color(.white))
                    .transform(src)
                let x = Int((Double(width - 30) * fx).rounded(.down)), y = Int((Double(height - 20) * fy).rounded(.down))
                XCTAssertEqual(out.packedPixels(), reference(src, width: width, height: height, x: x, y: y,
                                                            background: .color(.white)), "\(ratio) \(gravity)")
            }
            // A focal point centres the image on it as far as the canvas allows.
            for (px, py) in [(0.0, 0.0), (0.3, 0.7), (1.0, 0.5)] {
                let out = try PaddingTransformer(aspectRatio: ratio, gravity: .focalPoint(x: px, y: py),
                                                 background: .transparent).transform(src)
                let x = Int(min(max(px * Double(width) - 15, 0), Double(width - 30)).rounded(.down))
                let y = Int(min(max(py * Double(height) - 10, 0), Double(height - 20)).rounded(.down))
                XCTAssertEqual(out.packedPixels(), reference(src, width: width, height: height, x: x, y: y,
                                                            background: .transparent), "\(ratio) focus \(px),\(py)")
            }
        }
    }

    func testMatchesVipsEmbed() throws {
        let src = try ColorOpsCheck.photo(width: 41, height: 29, alpha: false)
        let out = try PaddingTransformer(top: 3, right: 7, bottom: 11, left: 5, background: .color(RGBColor(red: 20, green: 90, blue: 200)))
            .transform(src)
        let vips = try ColorOpsCheck.vips(src, "embed", ["5", "3", "53", "43", "--extend", "background",
                                                         "--background", "20 90 200"])
        XCTAssertEqual(out.packedPixels(), vips.packedPixels())
    }

    func testCanvasOverTheLimitIsRefusedBeforeAllocating() throws {
        let src = try ColorOpsCheck.photo(width: 16, height: 16, alpha: false)
        for transformer in [
            PaddingTransformer(top: 0, right: 10000, bottom: 10000, left: 0, background: .transparent),
            PaddingTransformer(top: 0, right: Int(UInt32.max), bottom: 0, left: Int(UInt32.max), background: .transparent),
            PaddingTransformer(aspectRatio: 1e9, background: .transparent),
            PaddingTransformer(aspectRatio: 1e-300, background: .transparent),
        ] {
            XCTAssertThrowsError(try transformer.transform(src)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .limitExceeded, "\(transformer.key): \(error)")
                XCTAssertTrue((error as? ImageKitError)?.message.contains("over the limit") ?? false, "\(error)")
            }
        }
    }

    func testBadParametersFail() throws {
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        for transformer in [
            PaddingTransformer(top: -1, right: 0, bottom: 0, left: 0, background: .transparent),
            PaddingTransformer(top: 0, right: 0, bottom: Int.max, left: 0, background: .transparent),
            PaddingTransformer(aspectRatio: 0, background: .transparent),
            PaddingTransformer(aspectRatio: -2, background: .transparent),
            PaddingTransformer(aspectRatio: .nan, background: .transparent),
            PaddingTransformer(aspectRatio: .infinity, background: .transparent),
            PaddingTransformer(aspectRatio: 2, gravity: .smart, background: .transparent),
            PaddingTransformer(aspectRatio: 2, gravity: .focalPoint(x: 1.5, y: 0), background: .transparent),
        ] {
            XCTAssertThrowsError(try transformer.transform(src)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument, "\(transformer.key): \(error)")
            }
        }
    }

    func testEveryFrameOfAnAnimation() throws {
        try ColorOpsCheck.assertFramesAlike(PaddingTransformer(top: 2, right: 3, bottom: 4, left: 5, background: .color(.white)))
        try ColorOpsCheck.assertFramesAlike(PaddingTransformer(aspectRatio: 1, gravity: .south, background: .transparent))
    }

    func testACancelledLoadStops() throws {
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        XCTAssertThrowsError(try PaddingTransformer(top: 1, right: 1, bottom: 1, left: 1, background: .transparent)
            .transform(src, cancellation: cancellation)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .cancelled)
        }
    }

    func testKeysAreStableAndDistinct() {
        XCTAssertEqual(PaddingTransformer(top: 10, right: 20, bottom: 10, left: 20, background: .color(.white)).key,
                       "pad(10,20,10,20,#ffffff)")
        XCTAssertEqual(PaddingTransformer(aspectRatio: 1.5, background: .transparent).key, "extend(1.5,center,transparent)")
        XCTAssertEqual(PaddingTransformer(aspectRatio: 1.5, gravity: .focalPoint(x: 0.25, y: 0.5), background: .color(.black)).key,
                       "extend(1.5,focus(0.25,0.5),#000000)")
        ColorOpsCheck.assertDistinct([
            PaddingTransformer(top: 10, right: 20, bottom: 10, left: 20, background: .color(.white)).key,
            PaddingTransformer(top: 20, right: 10, bottom: 10, left: 20, background: .color(.white)).key,
            PaddingTransformer(top: 10, right: 20, bottom: 10, left: 20, background: .transparent).key,
            PaddingTransformer(aspectRatio: 1.5, background: .transparent).key,
            PaddingTransformer(aspectRatio: 1.5, gravity: .north, background: .transparent).key,
            PaddingTransformer(aspectRatio: 2, background: .transparent).key,
        ])
    }
}
