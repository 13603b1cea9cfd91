import Foundation
@testable import ImageKit
import XCTest

/// Cutting and filling by gravity: the window every compass point and focal point names,
/// against a double-precision placement written here from the definition; clamping; fills of
/// stills, animations and transparent images, on the transformer and the decode path; keys.
final class GravityCropTests: XCTestCase {
    private static let compass: [Gravity] = [.center, .north, .northEast, .east, .southEast, .south, .southWest,
                                             .west, .northWest]
    private static let focal: [Gravity] = [.focalPoint(x: 0, y: 0), .focalPoint(x: 0.25, y: 0.7),
                                           .focalPoint(x: 1, y: 1), .focalPoint(x: 0.5, y: 0.5),
                                           .focalPoint(x: 0.9, y: 0.1)]

    /// The reference placement: the window's top-left corner in whole pixels, each side
    /// clamped to the image first.
    private func window(_ gravity: Gravity, width: Int, height: Int, in image: Image) -> PixelRect {
        let w = min(width, image.width), h = min(height, image.height)
        let dw = Double(image.width - w), dh = Double(image.height - h)
        let x: Double, y: Double
        switch gravity {
        case .focalPoint(let fx, let fy):
            x = min(dw, max(0, fx * Double(image.width) - Double(w) / 2))
            y = min(dh, max(0, fy * Double(image.height) - Double(h) / 2))
        default:
            let fraction: [Gravity: (Double, Double)] = [
                .center: (0.5, 0.5), .north: (0.5, 0), .northEast: (1, 0), .east: (1, 0.5), .southEast: (1, 1),
                .south: (0.5, 1), .southWest: (0, 1), .west: (0, 0.5), .northWest: (0, 0),
            ]
            let f = fraction[gravity]!
            x = dw * f.0
            y = dh * f.1
        }
        return PixelRect(x: Int((x + 0.5).rounded(.down)), y: Int((y + 0.5).rounded(.down)), width: w, height: h)
    }

    func testEveryGravityCutsTheReferenceWindow() throws {
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(width: 67, height: 45, alpha: alpha)
            for gravity in Self.compass + Self.focal {
                for (w, h) in [(20, 10), (67, 5), (1, 45), (33, 44), (66, 1)] {
                    let out = try CroppingTransformer(size: PixelSize(width: w, height: h), gravity: gravity).transform(src)
                    let expected = try ImageResizer.crop(src, to: window(gravity, width: w, height: h, in: src))
                    XCTAssertEqual(out.width, expected.width)
                    XCTAssertEqual(out.height, expected.height)
                    XCTAssertEqual(out.packedPixels(), expected.packedPixels(), "\(gravity.key) \(w)x\(h) alpha \(alpha)")
                    XCTAssertEqual(out.isOpaque, !out.packedPixels().enumerated().contains { $0.offset % 4 == 3 && $0.element != 255 })
                }
            }
        }
    }

    func testWindowsLargerThanTheImageAreClamped() throws {
        let src = try ColorOpsCheck.photo(width: 30, height: 20, alpha: false)
        for gravity in Self.compass + Self.focal + [.smart] {
            let whole = try CroppingTransformer(size: PixelSize(width: 500, height: 900), gravity: gravity).transform(src)
            XCTAssertEqual(whole.packedPixels(), src.packedPixels(), gravity.key)
            let row = try CroppingTransformer(size: PixelSize(width: 500, height: 4), gravity: gravity).transform(src)
            XCTAssertEqual(row.width, 30)
            XCTAssertEqual(row.height, 4)
        }
        // The corners and edges put the window against them.
        let se = try CroppingTransformer(size: PixelSize(width: 10, height: 10), gravity: .southEast).transform(src)
        XCTAssertEqual(se.packedPixels(), try ImageResizer.crop(src, to: PixelRect(x: 20, y: 10, width: 10, height: 10)).packedPixels())
    }

    /// A fill places its window in the source before resampling: 160x80 filling 40x40 keeps an
    /// 80x80 window at x = 0, 40 or 80 — the crop of that window, resampled.
    func testFillPlacesTheWindowInTheSource() throws {
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(width: 160, height: 80, alpha: alpha)
            let box = PixelSize(width: 40, height: 40)
            for (gravity, x) in [(Gravity.west, 0), (.northWest, 0), (.center, 40), (.north, 40), (.east, 80),
                                 (.southEast, 80), (.focalPoint(x: 0.25, y: 0.5), 0), (.focalPoint(x: 0.6, y: 0), 56)] {
                let out = try ResizingTransformer(size: box, mode: .fill, gravity: gravity).transform(src)
                let window = try ImageResizer.crop(src, to: PixelRect(x: x, y: 0, width: 80, height: 80))
                let expected = try ImageResizer(size: box, mode: .fill).resize(window)
                let psnr = ColorOpsCheck.psnr(out, expected)
                XCTAssertGreaterThanOrEqual(psnr, 40, "\(gravity.key): \(psnr) dB against the window at x = \(x)")
                ColorOpsCheck.assertPremultiplied(out)
                for other in [0, 40, 80] where abs(other - x) >= 40 {
                    let wrong = try ImageResizer(size: box, mode: .fill)
                        .resize(ImageResizer.crop(src, to: PixelRect(x: other, y: 0, width: 80, height: 80)))
                    XCTAssertLessThan(ColorOpsCheck.psnr(out, wrong), psnr - 5, "\(gravity.key) looks like x = \(other)")
                }
            }
            // The centre is exactly the fill as it always was.
            XCTAssertEqual(try ResizingTransformer(size: box, mode: .fill, gravity: .center).transform(src).packedPixels(),
                           try ImageResizer(size: box, mode: .fill).resize(src).packedPixels())
        }
    }

    func testEveryFrameOfAnAnimation() throws {
        try ColorOpsCheck.assertFramesAlike(ResizingTransformer(size: PixelSize(width: 10, height: 12), mode: .fill,
                                                                gravity: .east))
        try ColorOpsCheck.assertFramesAlike(ResizingTransformer(size: PixelSize(width: 10, height: 12), mode: .fill,
                                                                gravity: .focalPoint(x: 0.2, y: 0.8)))
        try ColorOpsCheck.assertFramesAlike(CroppingTransformer(size: PixelSize(width: 9, height: 7), gravity: .southWest))
    }

    /// Decode-time fills: any gravity but the centre resamples to cover the box and cuts the
    /// window from that, so it equals a cover-sized thumbnail cut by the transformer.
    func testDecodeTimeFillWithGravity() throws {
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(width: 160, height: 80, alpha: alpha)
            let png = try ImageEncoder.encode(src, as: .png())
            let cover = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 0, height: 40),
                                                                thumbnailMode: .fit)).decode(png)
            XCTAssertEqual(cover.width, 80)
            for gravity in Self.compass.dropFirst() + Self.focal + [.smart] {
                let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 40, height: 40), thumbnailMode: .fill,
                                            thumbnailGravity: gravity)
                let thumbnail = try ImageDecoder(options: options).decode(png)
                let expected = try CroppingTransformer(size: PixelSize(width: 40, height: 40), gravity: gravity).transform(cover)
                XCTAssertEqual(thumbnail.packedPixels(), expected.packedPixels(), "\(gravity.key), alpha \(alpha)")
                XCTAssertEqual(thumbnail.isOpaque, expected.isOpaque)
            }
            // The centre stays on the old path (the window cut in the source before resampling).
            let centre = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 40, height: 40),
                                                                 thumbnailMode: .fill)).decode(png)
            XCTAssertEqual(centre.width, 40)
            XCTAssertEqual(centre.height, 40)
        }
    }

    func testCentreKeysAreUnchanged() {
        let box = PixelSize(width: 200, height: 100)
        XCTAssertEqual(ResizingTransformer(size: box, mode: .fill).key, "resize(200x100,fill)")
        XCTAssertEqual(ResizingTransformer(size: box, mode: .fill, gravity: .center).key, "resize(200x100,fill)")
        XCTAssertEqual(ResizingTransformer(size: box, mode: .fill, allowUpscale: false).key, "resize(200x100,fill,noupscale)")
        XCTAssertEqual(ResizingTransformer(size: box).key, "resize(200x100,fit)")
        XCTAssertEqual(ResizingTransformer(size: box, mode: .fit, gravity: .north).key, "resize(200x100,fit)")
        XCTAssertEqual(CroppingTransformer(rect: PixelRect(x: 1, y: 2, width: 3, height: 4)).key, "crop(1,2,3x4)")
        let decode = DecodeOptions(thumbnailPixelSize: PixelSize(width: 64, height: 64), thumbnailMode: .fill)
        XCTAssertEqual(ImageLoadKeys.keys(base: "u", decode, nil, transformsAnimations: false, output: nil).key,
                       "u|thumbnail=64x64-fill")
    }

    func testGravityKeysAreStableAndDistinct() {
        let box = PixelSize(width: 200, height: 100)
        XCTAssertEqual(ResizingTransformer(size: box, mode: .fill, gravity: .north).key, "resize(200x100,fill,north)")
        XCTAssertEqual(ResizingTransformer(size: box, mode: .fill, gravity: .smart, allowUpscale: false,
                                           sharpen: SharpenTransformer(sigma: 1)).key,
                       "resize(200x100,fill,smart,noupscale,\(SharpenTransformer(sigma: 1).key))")
        XCTAssertEqual(CroppingTransformer(size: PixelSize(width: 30, height: 20), gravity: .north).key, "crop(30x20,north)")
        XCTAssertEqual(CroppingTransformer(size: PixelSize(width: 30, height: 20), gravity: .focalPoint(x: 0.25, y: 0.5)).key,
                       "crop(30x20,focus(0.25,0.5))")
        XCTAssertEqual(CroppingTransformer(size: PixelSize(width: 30, height: 20)).key, "crop(30x20,center)")
        let all = Self.compass + Self.focal + [.smart]
        ColorOpsCheck.assertDistinct(all.map { ResizingTransformer(size: box, mode: .fill, gravity: $0).key })
        ColorOpsCheck.assertDistinct(all.map { CroppingTransformer(size: box, gravity: $0).key }
                                     + [CroppingTransformer(rect: PixelRect(x: 0, y: 0, width: 200, height: 100)).key])
        var decode = DecodeOptions(thumbnailPixelSize: PixelSize(width: 64, height: 64), thumbnailMode: .fill,
                                   thumbnailGravity: .southEast)
        XCTAssertEqual(ImageLoadKeys.keys(base: "u", decode, nil, transformsAnimations: false, output: nil).key,
                       "u|thumbnail=64x64-fill-southeast")
        decode.thumbnailMode = .fit
        XCTAssertEqual(ImageLoadKeys.keys(base: "u", decode, nil, transformsAnimations: false, output: nil).key,
                       "u|thumbnail=64x64")
    }

    func testBadParametersFail() throws {
        let src = try ColorOpsCheck.photo(width: 16, height: 16, alpha: false)
        let outside: [Gravity] = [.focalPoint(x: -0.1, y: 0.5), .focalPoint(x: 0.5, y: 1.5), .focalPoint(x: .nan, y: 0)]
        func assertInvalid(_ prefix: String, _ body: () throws -> Image) {
            XCTAssertThrowsError(try body()) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument, "\(error)")
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix(prefix) ?? false, "\(error)")
            }
        }
        for gravity in outside {
            assertInvalid("crop:") { try CroppingTransformer(size: PixelSize(width: 4, height: 4), gravity: gravity).transform(src) }
            assertInvalid("resize:") {
                try ResizingTransformer(size: PixelSize(width: 4, height: 4), mode: .fill, gravity: gravity).transform(src)
            }
            let png = try ImageEncoder.encode(src, as: .png())
            assertInvalid("thumbnail:") {
                try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 4, height: 4),
                                                        thumbnailMode: .fill, thumbnailGravity: gravity)).decode(png)
            }
        }
        for size in [PixelSize(width: 0, height: 4), PixelSize(width: 4, height: 0), PixelSize(width: -1, height: 4)] {
            for gravity in [Gravity.north, .smart] {
                assertInvalid("crop:") { try CroppingTransformer(size: size, gravity: gravity).transform(src) }
            }
        }
        XCTAssertNil(Gravity(key: "focus(1.5,0)"))
        XCTAssertEqual(Gravity(key: "focus(0.25,1)"), .focalPoint(x: 0.25, y: 1))
    }
}
