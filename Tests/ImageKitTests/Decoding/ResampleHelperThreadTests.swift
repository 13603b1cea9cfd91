import CAnchors
import CImageCore
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// Thumbnails resampled on the helper thread of ``DecodeOptions/usesHelperThread``: a frame
/// handed to the sink whole (JPEG XL, Adam7 PNG, interlaced GIF, a WebP with alpha decoded in
/// one step) runs in two bands of output rows on two threads, and a WebP with alpha decoded in
/// steps (a cancel flag given, or fed piece by piece) has its rows resampled by a helper thread
/// as libwebp finishes them. Either way: the pixels and opacity of one thread, partial images
/// that show finished rows only, and cancellation and damaged files that end as on one thread.
final class ResampleHelperThreadTests: XCTestCase {
    /// Over a million pixels each, so the helper thread is used.
    private static let photo = SyntheticPhoto.rgba(width: 1280, height: 900, seed: 21, alpha: true)
    private static let losslessWebP = makeWebP(photo, width: 1280, height: 900, quality: -1)
    private static let lossyWebP = makeWebP(photo, width: 1280, height: 900, quality: 98)
    private static let jxl = anchorBytes { out, size in
        anchors_encode_jxl(SyntheticPhoto.rgba(width: 1400, height: 1000, seed: 22), 1400, 1000, 1.0, 3, out, size)
    }!
    private static let adam7: [UInt8] = {
        var png = PNGWriter(width: 1200, height: 900, colorType: .rgba, bitDepth: 8,
                            samples: SyntheticPhoto.rgba(width: 1200, height: 900, seed: 23, alpha: true).map { UInt16($0) })
        png.interlaced = true
        return png.encode()
    }()
    private static let interlacedGIF: [UInt8] = {
        let palette = (0..<256).flatMap { [UInt8($0), UInt8(255 - $0), UInt8(truncatingIfNeeded: $0 * 7)] }
        let indices = (0..<(1200 * 900)).map { UInt8(truncatingIfNeeded: ($0 % 1200) / 3 + ($0 / 1200) / 5 + $0 % 7) }
        return GIFWriter(width: 1200, height: 900, globalPalette: palette,
                         frames: [.init(width: 1200, height: 900, indices: indices, interlaced: true)]).encode()
    }()

    /// The WebPs, whose rows come over time when decoded in steps.
    private static let webps: [(String, [UInt8])] = [("lossless WebP", losslessWebP), ("lossy WebP with alpha", lossyWebP)]
    /// Every input that takes a helper-thread path.
    private static let inputs: [(String, [UInt8])] = webps + [("JPEG XL", jxl), ("Adam7 PNG", adam7),
                                                             ("interlaced GIF", interlacedGIF)]

    /// Boxes through each filter path: area then Lanczos on both axes, Lanczos alone on one, a
    /// filled box (cropped), a stretched one, and a small one.
    private static let boxes: [(PixelSize, ImageResizer.Mode)] = [
        (PixelSize(square: 256), .fit), (PixelSize(width: 700, height: 0), .fit), (PixelSize(width: 90, height: 170), .fill),
        (PixelSize(width: 500, height: 37), .stretch), (PixelSize(square: 48), .fit),
    ]

    private func options(_ box: PixelSize, _ mode: ImageResizer.Mode, helper: Bool,
                         limits: DecodeLimits = DecodeLimits()) -> DecodeOptions {
        DecodeOptions(limits: limits, thumbnailPixelSize: box, thumbnailMode: mode, usesHelperThread: helper)
    }

    /// Pixels, or the failure's code and message.
    private func outcome(_ decode: () throws -> Image) -> Result<Image, ImageKitError> {
        do {
            return .success(try decode())
        } catch {
            return .failure(error as! ImageKitError)
        }
    }

    private func assertSame(_ got: Result<Image, ImageKitError>, _ expected: Result<Image, ImageKitError>,
                            _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        switch (got, expected) {
        case let (.success(a), .success(b)):
            XCTAssertEqual([a.width, a.height], [b.width, b.height], what, file: file, line: line)
            XCTAssertEqual(a.isOpaque, b.isOpaque, what, file: file, line: line)
            XCTAssertTrue(a.packedPixels() == b.packedPixels(), "\(what): pixels differ", file: file, line: line)
        case let (.failure(a), .failure(b)):
            XCTAssertEqual(a.code, b.code, what, file: file, line: line)
            XCTAssertEqual(a.message, b.message, what, file: file, line: line)
        case let (a, b):
            XCTFail("\(what): helper thread \(a), one thread \(b)", file: file, line: line)
        }
    }

    /// ImageDecoder has no cancel flag: a WebP is decoded in one step and handed over whole.
    func testFramesHandedOverWholeGiveTheSamePixels() throws {
        for (name, data) in Self.inputs {
            for (box, mode) in Self.boxes {
                let what = "\(name), \(box) \(mode)"
                let alone = outcome { try ImageDecoder(options: options(box, mode, helper: false)).decode(data) }
                let helped = outcome { try ImageDecoder(options: options(box, mode, helper: true)).decode(data) }
                XCTAssertNoThrow(try alone.get(), what)
                assertSame(helped, alone, what)
            }
        }
    }

    /// The coder hands the decoder a cancel flag: a WebP is decoded in steps, its rows resampled
    /// by the helper thread as each step finishes them.
    func testRowsHandedOverInStepsGiveTheSamePixels() throws {
        let coder = BuiltInImageCoder()
        for (name, data) in Self.webps {
            XCTAssertGreaterThan(data.count, 2 * 64 * 1024, "\(name): too small to be decoded in steps")
            for (box, mode) in Self.boxes {
                let what = "\(name), \(box) \(mode)"
                let alone = outcome { try ImageDecoder(options: options(box, mode, helper: false)).decode(data) }
                let helped = outcome {
                    try coder.decode(Data(data), options: options(box, mode, helper: true), cancellation: DecodeCancellation())
                }
                assertSame(helped, alone, what)
            }
        }
    }

    /// The bands' second scaler is counted against the memory limit: at the one-thread decode's
    /// peak, the helper's decode still succeeds (on one thread), with the same pixels.
    func testTheSecondScalerIsCountedAndGivenUpAtTheMemoryLimit() throws {
        let box = PixelSize(square: 256)
        for (name, data) in [("JPEG XL", Self.jxl), ("lossless WebP", Self.losslessWebP)] {
            var one = DecodeStatistics(), two = DecodeStatistics()
            let alone = try data.withUnsafeBytes {
                try ImageDecoder(options: options(box, .fit, helper: false)).decode($0, statistics: &one)
            }
            _ = try data.withUnsafeBytes {
                try ImageDecoder(options: options(box, .fit, helper: true)).decode($0, statistics: &two)
            }
            XCTAssertGreaterThan(two.peakBytes, one.peakBytes, "\(name): the second scaler is not counted")
            let tight = DecodeLimits(maxMemoryBytes: one.peakBytes)
            let helped = outcome { try ImageDecoder(options: options(box, .fit, helper: true, limits: tight)).decode(data) }
            assertSame(helped, .success(alone), "\(name) at the memory limit")
        }
    }

    private func cOptions(thumbnail: UInt32, helper: Bool) -> ic_decode_options {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        o.thumbnail_width = thumbnail
        o.thumbnail_height = thumbnail
        o.use_helper_thread = helper ? 1 : 0
        return o
    }

    /// Feeds `data` in pieces of `piece` bytes, checking after each that the partial image's rows
    /// are the final thumbnail's or still transparent; returns the outcome of finish.
    private func incremental(_ data: [UInt8], _ options: ic_decode_options, piece: Int, final: DecodeOutcome,
                             what: String) -> DecodeOutcome {
        var o = options
        var inc: OpaquePointer?
        var err = ic_error()
        XCTAssertEqual(ic_incremental_new(&o, &inc, &err), IC_OK, what)
        defer { ic_incremental_free(inc) }
        let rowBytes = final.width * 4
        for start in stride(from: 0, to: data.count, by: piece) {
            let st = data[start..<min(start + piece, data.count)].withUnsafeBufferPointer {
                ic_incremental_feed(inc, $0.baseAddress, $0.count, &err)
            }
            if st != IC_OK { return DecodeOutcome(status: st, image: nil, error: err) }
            var partial: UnsafeMutablePointer<ic_image>?
            XCTAssertEqual(ic_incremental_partial(inc, &partial, &err), IC_OK, what)
            guard let partial else { continue }
            let shown = DecodeOutcome(status: IC_OK, image: partial)  // frees `partial`
            guard final.status == IC_OK else { continue }
            for y in 0..<shown.height {
                let row = shown.pixels[y * rowBytes..<(y + 1) * rowBytes]
                if !row.allSatisfy({ $0 == 0 }) && row != final.pixels[y * rowBytes..<(y + 1) * rowBytes] {
                    XCTFail("\(what): row \(y) of the partial image after \(start) bytes is not final")
                    break
                }
            }
        }
        var out: UnsafeMutablePointer<ic_image>?
        let st = ic_incremental_finish(inc, &out, nil, &err)
        return DecodeOutcome(status: st, image: out, error: err)
    }

    private func assertEqual(_ got: DecodeOutcome, _ expected: DecodeOutcome, _ what: String) {
        XCTAssertEqual(got.status, expected.status, what)
        XCTAssertEqual(got.message, expected.message, what)
        XCTAssertEqual([got.width, got.height], [expected.width, expected.height], what)
        XCTAssertEqual(got.opaque, expected.opaque, what)
        XCTAssertTrue(got.pixels == expected.pixels, "\(what): pixels differ")
    }

    /// The incremental decode with the helper thread ends with ic_decode's thumbnail on one thread,
    /// and its partial images show only rows the helper has finished.
    func testIncrementalDecodeWithTheHelperEndsAsTheWholeDecode() {
        for (name, data) in Self.webps {
            for thumbnail: UInt32 in [256, 60] {
                let expected = DecodeOutcome.decode(data, cOptions(thumbnail: thumbnail, helper: false))
                XCTAssertEqual(expected.status, IC_OK, name)
                for piece in [16384, 100_000, data.count / 2 + 1] {
                    let what = "\(name), thumbnail \(thumbnail), pieces of \(piece)"
                    let got = incremental(data, cOptions(thumbnail: thumbnail, helper: true), piece: piece,
                                          final: expected, what: what)
                    assertEqual(got, expected, what)
                }
            }
        }
    }

    /// Cut short: every path ends with the one-thread decode's failure (the helper thread, with
    /// rows handed over, is ended cleanly).
    func testTruncatedFilesFailAsOnOneThread() {
        let coder = BuiltInImageCoder()
        let box = PixelSize(square: 256)
        for (name, data) in Self.inputs {
            for fraction in [0.4, 0.8, 0.995] {
                let cut = Array(data.prefix(Int(Double(data.count) * fraction)))
                let what = "\(name) cut at \(fraction)"
                let alone = outcome { try ImageDecoder(options: options(box, .fit, helper: false)).decode(cut) }
                if case .success = alone { XCTFail("\(what): decodes"); continue }
                assertSame(outcome { try ImageDecoder(options: options(box, .fit, helper: true)).decode(cut) }, alone, what)
                assertSame(outcome {
                    try coder.decode(Data(cut), options: options(box, .fit, helper: true), cancellation: DecodeCancellation())
                }, alone, "\(what), in steps")
                let expected = DecodeOutcome.decode(cut, cOptions(thumbnail: 256, helper: false))
                let got = incremental(cut, cOptions(thumbnail: 256, helper: true), piece: 65536, final: expected,
                                      what: "\(what), incremental")
                assertEqual(got, expected, "\(what), incremental")
            }
        }
    }

    /// Cancelled while the helper thread has rows to resample: the decode ends cancelled, with
    /// no image, and the thread ended.
    func testCancellationMidDecodeFailsCleanly() {
        for (name, data) in Self.webps {
            var cancel: Int32 = 0
            withUnsafeMutablePointer(to: &cancel) { flag in
                var o = cOptions(thumbnail: 256, helper: true)
                o.cancel_flag = UnsafePointer(flag)
                var inc: OpaquePointer?
                var err = ic_error()
                XCTAssertEqual(ic_incremental_new(&o, &inc, &err), IC_OK, name)
                defer { ic_incremental_free(inc) }
                let half = data.prefix(data.count / 2)
                XCTAssertEqual(half.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress, $0.count, &err) },
                               IC_OK, name)
                XCTAssertEqual(ic_incremental_is_streaming(inc), 1, name)
                ic_cancel_flag_set(flag, 1)
                let rest = data.dropFirst(data.count / 2)
                XCTAssertEqual(rest.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress, $0.count, &err) },
                               IC_ERR_CANCELLED, name)
                var out: UnsafeMutablePointer<ic_image>?
                XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_ERR_CANCELLED, name)
                XCTAssertNil(out, name)
            }
            // A whole-buffer decode in steps, cancelled from another thread at a few moments: it
            // ends cancelled, or (when the flag came too late) with the one-thread pixels.
            let box = PixelSize(square: 256)
            let alone = outcome { try ImageDecoder(options: options(box, .fit, helper: false)).decode(data) }
            var cancelled = 0
            for delay in [0, 1, 3, 6, 12] {
                let cancellation = DecodeCancellation()
                let canceller = Thread {
                    Thread.sleep(forTimeInterval: Double(delay) / 1000)
                    cancellation.cancel()
                }
                canceller.start()
                let got = outcome {
                    try BuiltInImageCoder().decode(Data(data), options: options(box, .fit, helper: true),
                                                   cancellation: cancellation)
                }
                while !cancellation.isCancelled { Thread.sleep(forTimeInterval: 0.001) }
                if case let .failure(error) = got, error.code == .cancelled {
                    cancelled += 1
                } else {
                    assertSame(got, alone, "\(name), cancelled after \(delay) ms")
                }
            }
            XCTAssertGreaterThan(cancelled, 0, "\(name): no decode was cancelled")
        }
    }
}
