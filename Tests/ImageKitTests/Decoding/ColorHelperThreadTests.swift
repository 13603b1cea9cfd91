import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// The conversion to sRGB on a helper thread (``DecodeOptions/usesHelperThread``): the same
/// pixels and opacity as on one thread, and a decode that fails half-way (the helper busy with
/// the rows before) ends it cleanly.
final class ColorHelperThreadTests: XCTestCase {
    /// The Display P3 profile of Tests/Fixtures/color/p3.jpg (read per call: a static `Data`
    /// would stay allocated until exit, which LeakSanitizer reports).
    private func p3Profile() throws -> Data {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/color/p3.jpg")
        let icc = try ImageDecoder().decode(Data(contentsOf: url)).iccProfile
        return try XCTUnwrap(icc, "Tests/Fixtures/color/p3.jpg has no readable profile")
    }

    /// A 1200 x 900 picture (large enough for the helper) tagged with the Display P3 profile.
    private func tagged(_ format: EncodeFormat, alpha: Bool) throws -> Data {
        let (w, h) = (1200, 900)
        var px = SyntheticPhoto.rgba(width: w, height: h, seed: 7, alpha: alpha)
        for i in stride(from: 0, to: px.count, by: 4) {
            let a = Int(px[i + 3])
            for c in 0..<3 { px[i + c] = UInt8((Int(px[i + c]) * a + 127) / 255) }
        }
        let image = try Image(width: w, height: h, premultipliedRGBA: px)
        return try ImageEncoder.encode(image, as: format, iccProfile: p3Profile())
    }

    private func decode(_ data: Data, helper: Bool) throws -> Image {
        try ImageDecoder(options: DecodeOptions(usesHelperThread: helper)).decode(data)
    }

    func testHelperThreadGivesTheSamePixelsAsOneThread() throws {
        let cases: [(String, Data, Bool)] = [
            ("JPEG", try tagged(.jpeg(quality: 90), alpha: false), true),
            ("PNG with alpha", try tagged(.png(), alpha: true), false),
            ("lossy WebP", try tagged(.webp(quality: 80), alpha: false), true),
        ]
        for (what, data, opaque) in cases {
            let alone = try decode(data, helper: false)
            let helped = try decode(data, helper: true)
            XCTAssertTrue(helped.isColorConverted, what)
            XCTAssertEqual(helped.isOpaque, opaque, what)
            XCTAssertEqual(alone.isOpaque, helped.isOpaque, what)
            XCTAssertEqual(helped.packedPixels(), alone.packedPixels(), what)
            let raw = try ImageDecoder(options: DecodeOptions(usesHelperThread: true, colorMode: .raw)).decode(data)
            XCTAssertNotEqual(raw.packedPixels(), helped.packedPixels(), "\(what): the helper converted nothing")
        }
    }

    func testTruncatedDecodeWithHelperThreadFailsCleanly() throws {
        let data = try tagged(.jpeg(quality: 90), alpha: false)
        for cut in [data.count / 2, data.count - 100] {
            XCTAssertThrowsError(try decode(data.prefix(cut), helper: true), "cut at \(cut)")
        }
    }
}
