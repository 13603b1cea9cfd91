import CImageCore
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// The conversion to sRGB on a helper thread (``DecodeOptions/usesHelperThread``): the same
/// pixels and opacity as on one thread, and a decode that fails half-way (the helper busy with
/// the rows before) ends it cleanly; partial images of a streamed decode show converted rows only.
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

    /// Thumbnails whose codec rows the resampler's helper thread takes (a WebP decoded in steps,
    /// a frame handed over whole) convert those rows there too: the pixels of one thread.
    func testThumbnailsResampledOnTheHelperThreadAreConvertedAsOnOneThread() throws {
        let box = PixelSize(square: 256)
        let cases: [(String, Data)] = [
            ("lossless WebP with alpha", try tagged(.webpLossless, alpha: true)),
            ("lossy WebP", try tagged(.webp(quality: 95), alpha: false)),
        ]
        for (what, data) in cases {
            let alone = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: box)).decode(data)
            XCTAssertTrue(alone.isColorConverted, what)
            let options = DecodeOptions(thumbnailPixelSize: box, usesHelperThread: true)
            let whole = try ImageDecoder(options: options).decode(data)
            let steps = try BuiltInImageCoder().decode(data, options: options, cancellation: DecodeCancellation())
            for (how, helped) in [("whole", whole), ("in steps", steps)] {
                XCTAssertTrue(helped.isColorConverted, "\(what), \(how)")
                XCTAssertEqual(helped.isOpaque, alone.isOpaque, "\(what), \(how)")
                XCTAssertTrue(helped.packedPixels() == alone.packedPixels(), "\(what), \(how): pixels differ")
            }
        }
    }

    func testTruncatedDecodeWithHelperThreadFailsCleanly() throws {
        let data = try tagged(.jpeg(quality: 90), alpha: false)
        for cut in [data.count / 2, data.count - 100] {
            XCTAssertThrowsError(try decode(data.prefix(cut), helper: true), "cut at \(cut)")
        }
    }

    /// Partial images of a streamed decode whose rows the helper converts show only rows it
    /// has converted: each row of a partial image is the final row or still transparent.
    func testPartialImagesShowOnlyRowsTheHelperHasConverted() throws {
        let data = [UInt8](try tagged(.jpeg(quality: 90), alpha: false))
        let final = try decode(Data(data), helper: false).packedPixels()
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        o.use_helper_thread = 1
        var inc: OpaquePointer?
        var err = ic_error()
        XCTAssertEqual(ic_incremental_new(&o, &inc, &err), IC_OK)
        defer { ic_incremental_free(inc) }
        var shownRows = 0
        for start in stride(from: 0, to: data.count, by: 4096) {
            let piece = data[start..<min(start + 4096, data.count)]
            let fed = piece.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress, $0.count, &err) }
            XCTAssertEqual(fed, IC_OK)
            var partial: UnsafeMutablePointer<ic_image>?
            XCTAssertEqual(ic_incremental_partial(inc, &partial, &err), IC_OK)
            guard let image = partial?.pointee else { continue }
            defer { ic_image_free(partial) }
            let rowBytes = Int(image.width) * 4
            for y in 0..<Int(image.height) {
                let row = UnsafeBufferPointer(start: image.pixels + y * image.stride, count: rowBytes)
                if row.allSatisfy({ $0 == 0 }) { continue }
                guard row.elementsEqual(final[y * rowBytes..<(y + 1) * rowBytes]) else {
                    return XCTFail("row \(y) of the partial image after \(start) bytes is not converted yet")
                }
                shownRows = max(shownRows, y + 1)
            }
        }
        XCTAssertGreaterThan(shownRows, 0, "no partial image showed a row")
        var out: UnsafeMutablePointer<ic_image>?
        XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_OK)
        ic_image_free(out)
    }
}
