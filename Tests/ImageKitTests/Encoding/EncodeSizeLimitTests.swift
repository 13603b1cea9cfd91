import Foundation
@testable import ImageKit
import ImageKitTestSupport
import XCTest

/// `maxPixelSize` and `maxFileSize`: the box is respected without upscaling; a file is never
/// over its budget, at the highest quality that fits, and an impossible budget fails clearly.
final class EncodeSizeLimitTests: XCTestCase {
    private func photo(_ width: Int, _ height: Int, alpha: Bool = false) throws -> Image {
        try Image(width: width, height: height,
                  frames: [SyntheticPhoto.rgba(width: width, height: height, seed: 5, alpha: alpha)], premultiplied: false)
    }

    func testMaxPixelSizeFitsInsideTheBoxAndNeverUpscales() throws {
        let image = try photo(300, 200)
        let cases: [(PixelSize, [Int])] = [
            (PixelSize(width: 100, height: 100), [100, 67]),
            (PixelSize(width: 0, height: 50), [75, 50]),
            (PixelSize(width: 1000, height: 1000), [300, 200]),
            (PixelSize(width: 300, height: 200), [300, 200]),
        ]
        for (box, expected) in cases {
            let encoded = try ImageEncoder.encodedImageNow(image, as: .png(), maxPixelSize: box)
            XCTAssertEqual([encoded.pixelSize.width, encoded.pixelSize.height], expected, "\(box)")
            let back = try ImageDecoder().decode(encoded.data)
            XCTAssertEqual([back.width, back.height], expected, "\(box)")
        }
        XCTAssertThrowsError(try ImageEncoder.encode(image, as: .png(), maxPixelSize: PixelSize(width: 0, height: 0)))
    }

    func testMaxPixelSizeKeepsAnAnimation() throws {
        let frames = (0..<3).map { SyntheticPhoto.rgba(width: 80, height: 40, seed: UInt64($0)) }
        let image = try Image(width: 80, height: 40, frames: frames, delaysMilliseconds: [30, 40, 50], loopCount: 2,
                              premultiplied: false)
        for format in [EncodeFormat.gif(), .webp()] {
            let data = try ImageEncoder.encode(image, as: format, maxPixelSize: PixelSize(square: 20))
            let back = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(data)
            XCTAssertEqual([back.width, back.height, back.frameCount, back.loopCount], [20, 10, 3, 2], "\(format)")
            XCTAssertEqual(back.frameDelays, [30, 40, 50], "\(format)")
        }
    }

    func testLossyBudgetGetsTheHighestQualityThatFits() throws {
        let image = try photo(320, 240)
        for format in [EncodeFormat.jpeg(quality: 90), .webp(quality: 90)] {
            let full = try ImageEncoder.encode(image, as: format).count
            for fraction in [0.7, 0.4, 0.2] {
                let budget = Int(Double(full) * fraction)
                let result = try ImageEncoder.sizedEncode(image, as: format, maxFileSize: budget)
                XCTAssertLessThanOrEqual(result.data.count, budget, "\(format) \(fraction)")
                XCTAssertEqual(result.halvings, 0, "\(format) \(fraction)")
                XCTAssertLessThanOrEqual(result.encodes, 8, "\(format) \(fraction)")
                let quality = try XCTUnwrap(result.quality)
                XCTAssertLessThan(quality, 90)
                // Maximal: one quality step up is over the budget.
                let above = try ImageEncoder.encode(image, as: format.atQuality(quality + 1)).count
                XCTAssertGreaterThan(above, budget, "\(format) at \(quality + 1)")
                XCTAssertEqual(result.data, try ImageEncoder.encode(image, as: format.atQuality(quality)))
            }
            // A budget the format's own quality meets costs one encode.
            let roomy = try ImageEncoder.sizedEncode(image, as: format, maxFileSize: full)
            XCTAssertEqual([roomy.encodes, roomy.quality], [1, 90])
        }
    }

    /// AVIF's quality maps onto 64 AV1 quantizers, and AV1's size is not strictly monotonic in
    /// them: the budget is kept and the search stays bounded; maximality is JPEG's and WebP's test.
    func testAnAVIFBudgetIsKeptWithinTheSearchBound() throws {
        let image = try photo(320, 240)
        let format = EncodeFormat.avif(quality: 80, speed: 10)
        let full = try ImageEncoder.encode(image, as: format).count
        for fraction in [0.6, 0.3] {
            let budget = Int(Double(full) * fraction)
            let result = try ImageEncoder.sizedEncode(image, as: format, maxFileSize: budget)
            XCTAssertLessThanOrEqual(result.data.count, budget, "\(fraction)")
            XCTAssertEqual(result.halvings, 0, "\(fraction)")
            XCTAssertLessThanOrEqual(result.encodes, 8, "\(fraction)")
            XCTAssertLessThan(try XCTUnwrap(result.quality), 80, "\(fraction)")
            XCTAssertEqual(try ImageDecoder().decode(result.data).sourceFormat, .avif)
        }
    }

    func testTooSmallForTheLowestQualityHalvesThenFails() throws {
        let image = try photo(320, 240)
        let lowest = try ImageEncoder.encode(image, as: .jpeg(quality: 1)).count
        let halved = try ImageEncoder.sizedEncode(image, as: .jpeg(), maxFileSize: lowest - 1)
        XCTAssertEqual(halved.halvings, 1)
        XCTAssertEqual([halved.pixelSize.width, halved.pixelSize.height], [160, 120])
        XCTAssertLessThanOrEqual(halved.data.count, lowest - 1)
        let back = try ImageDecoder().decode(halved.data)
        XCTAssertEqual([back.width, back.height], [160, 120])
        XCTAssertThrowsError(try ImageEncoder.encode(image, as: .jpeg(), maxFileSize: 100)) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, .limitExceeded)
            XCTAssertTrue(e?.message.hasPrefix("encode: no JPEG file fits the 100-byte budget: the smallest reached is ") ?? false,
                          "\(error)")
            XCTAssertTrue(e?.message.contains("at quality 1 at 40x30") ?? false, "\(error)")
        }
    }

    func testLosslessFormatsHalveUntilTheFileFits() throws {
        let image = try photo(200, 160, alpha: true)
        for format in [EncodeFormat.png(), .webpLossless, .gif()] {
            let full = try ImageEncoder.encode(image, as: format).count
            let result = try ImageEncoder.sizedEncode(image, as: format, maxFileSize: full / 2)
            XCTAssertGreaterThanOrEqual(result.halvings, 1, "\(format)")
            XCTAssertNil(result.quality)
            XCTAssertLessThanOrEqual(result.data.count, full / 2, "\(format)")
            XCTAssertEqual(result.pixelSize.width, 200 >> result.halvings, "\(format)")
            let exact = try ImageEncoder.sizedEncode(image, as: format, maxFileSize: full)
            XCTAssertEqual([exact.halvings, exact.encodes], [0, 1], "\(format)")
            XCTAssertThrowsError(try ImageEncoder.encode(image, as: format, maxFileSize: 10)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .limitExceeded, "\(format)")
            }
        }
        XCTAssertThrowsError(try ImageEncoder.encode(image, as: .png(), maxFileSize: 0)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
        }
    }
}
