import ImageKit
import XCTest

/// Pixelate against a double-precision reference: each block the mean of its premultiplied pixels.
final class PixelateTests: XCTestCase {
    private func reference(_ image: Image, frame: Int = 0, block: Int) -> [Double] {
        let src = ColorOpsCheck.samples(image, frame: frame), w = image.width, h = image.height
        var out = src
        for y0 in stride(from: 0, to: h, by: block) {
            for x0 in stride(from: 0, to: w, by: block) {
                let ys = y0..<min(y0 + block, h), xs = x0..<min(x0 + block, w)
                for c in 0..<4 {
                    var sum = 0.0
                    for y in ys { for x in xs { sum += src[(y * w + x) * 4 + c] } }
                    let mean = sum / Double(ys.count * xs.count)
                    for y in ys { for x in xs { out[(y * w + x) * 4 + c] = mean } }
                }
            }
        }
        return out
    }

    func testMatchesReferenceOnOpaqueAndTransparentImages() throws {
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(width: 67, height: 45, alpha: alpha)
            for block in [1, 2, 7, 16, 45, 1000] {
                let out = try PixelateTransformer(blockSize: block).transform(src)
                XCTAssertLessThanOrEqual(ColorOpsCheck.maxError(out, reference: reference(src, block: block)), 0.5 + 1e-9,
                                         "block \(block), alpha \(alpha)")
                ColorOpsCheck.assertPremultiplied(out)
                XCTAssertEqual(out.isOpaque, !alpha)
            }
            XCTAssertEqual(try PixelateTransformer(blockSize: 1).transform(src).packedPixels(), src.packedPixels())
        }
    }

    func testTransparentPixelsAddNoColour() throws {
        // One block: opaque red beside transparent (premultiplied 0): the mean is half-transparent
        // red, straight (255, 0, 0), not a darker red.
        let px: [UInt8] = [255, 0, 0, 255, 0, 0, 0, 0]
        let out = try PixelateTransformer(blockSize: 2).transform(Image(width: 2, height: 1, premultipliedRGBA: px))
        XCTAssertEqual(out.packedPixels(), [128, 0, 0, 128, 128, 0, 0, 128])
    }

    func testEveryFrameOfAnAnimation() throws {
        try ColorOpsCheck.assertFramesAlike(PixelateTransformer(blockSize: 5))
    }

    func testBadBlockSizesFail() throws {
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        for block in [0, -3, 65537, Int.max] {
            XCTAssertThrowsError(try PixelateTransformer(blockSize: block).transform(src)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("pixelate:") ?? false, "\(error)")
            }
        }
    }

    func testKeysAreStableAndDistinct() {
        XCTAssertEqual(PixelateTransformer(blockSize: 16).key, "pixelate(16)")
        ColorOpsCheck.assertDistinct([PixelateTransformer(blockSize: 16).key, PixelateTransformer(blockSize: 8).key])
    }
}
