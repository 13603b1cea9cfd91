import CAnchors
import CImageCore
import ImageKit
import XCTest

final class WebPDecodeTests: XCTestCase {
    private func webp(_ rgba: [UInt8], _ w: Int, _ h: Int, quality: Float) -> [UInt8] {
        makeWebP(rgba, width: w, height: h, quality: quality)
    }

    private func bareDecode(_ data: [UInt8]) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var w: Int32 = 0, h: Int32 = 0
        XCTAssertEqual(anchors_decode_webp(data, data.count, &out, &w, &h), 0)
        defer { anchors_free(out) }
        return Array(UnsafeBufferPointer(start: out!, count: Int(w * h * 4)))
    }

    func testLosslessIsExact() throws {
        for alpha in [false, true] {
            let px = Pixels.pattern(width: 41, height: 29, alpha: alpha)
            let image = try ImageDecoder().decode(webp(px, 41, 29, quality: -1))
            XCTAssertEqual(image.sourceFormat, .webp)
            XCTAssertEqual(image.packedPixels(), Pixels.premultiplied(px), "alpha \(alpha)")
            XCTAssertEqual(image.isOpaque, !alpha)
        }
    }

    func testLossyAndLossyWithAlphaMatchLibwebp() throws {
        for alpha in [false, true] {
            let data = webp(Pixels.pattern(width: 64, height: 40, alpha: alpha), 64, 40, quality: 80)
            let image = try ImageDecoder().decode(data)
            XCTAssertEqual(image.packedPixels(), Pixels.premultiplied(bareDecode(data)), "alpha \(alpha)")
        }
    }

    /// libwebp's helper thread changes where the work runs, never the pixels: full size and
    /// thumbnails (its scaler), opaque and with alpha, alike with and without it.
    func testHelperThreadGivesTheSamePixels() throws {
        for alpha in [false, true] {
            let data = webp(Pixels.pattern(width: 640, height: 400, alpha: alpha), 640, 400, quality: 80)
            for thumbnail in [nil, PixelSize(square: 64)] {
                let one = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: thumbnail)).decode(data)
                let two = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: thumbnail, usesHelperThread: true))
                    .decode(data)
                XCTAssertEqual(two.width, one.width)
                XCTAssertEqual(two.height, one.height)
                XCTAssertEqual(two.packedPixels(), one.packedPixels(), "alpha \(alpha), thumbnail \(String(describing: thumbnail))")
            }
        }
    }

    func testStillsStopOnTheCancelFlag() {
        let stills = [
            ("lossless", webp(Pixels.pattern(width: 300, height: 200, alpha: true), 300, 200, quality: -1)),
            ("lossy", webp(Pixels.pattern(width: 300, height: 200, alpha: false), 300, 200, quality: 80)),
            ("lossy with alpha", webp(Pixels.pattern(width: 300, height: 200, alpha: true), 300, 200, quality: 80)),
        ]
        // Full size, and thumbnails: libwebp's scaler for opaque pictures, the resampler for the others.
        for (name, data) in stills {
            for thumbnail: UInt32 in [0, 64] {
                let (st, message) = FixtureReferences.decodeThroughC(data, cancelFlag: 1, thumbnail: thumbnail)
                XCTAssertEqual(st, IC_ERR_CANCELLED, "\(name), thumbnail \(thumbnail)")
                XCTAssertEqual(message, "WebP: decode cancelled", "\(name), thumbnail \(thumbnail)")
                XCTAssertEqual(FixtureReferences.decodeThroughC(data, cancelFlag: 0, thumbnail: thumbnail).0, IC_OK, "\(name), thumbnail \(thumbnail)")
            }
        }
    }

    func testDamagedStillsFailAsWebPDecodeSays() {
        let alpha = webp(Pixels.pattern(width: 64, height: 40, alpha: true), 64, 40, quality: 80)
        // Cut short: the container claims bytes that are not there.
        for keep in [alpha.count * 9 / 10, alpha.count - 1] {
            let (st, message) = FixtureReferences.decodeThroughC(Array(alpha.prefix(keep)), cancelFlag: 0)
            XCTAssertEqual(st, IC_ERR_TRUNCATED, "\(keep) of \(alpha.count) bytes: \(message)")
        }
        // A damaged alpha plane is corrupt data, not a cancellation.
        guard let tag = (0..<alpha.count - 4).first(where: { alpha[$0..<$0 + 4].elementsEqual("ALPH".utf8) }) else {
            return XCTFail("no ALPH chunk")
        }
        var damaged = alpha
        for i in (tag + 9)..<min(tag + 40, damaged.count) { damaged[i] = 0xFF }
        let (st, message) = FixtureReferences.decodeThroughC(damaged, cancelFlag: 0)
        XCTAssertEqual(st, IC_ERR_CORRUPT, message)
    }

    func testAnimationFramesAreFullyComposited() throws {
        let w = 24, h = 18
        // Frames that differ only in part, so the encoder writes sub-rectangles with blending.
        var frames: [[UInt8]] = []
        var canvas = Pixels.pattern(width: w, height: h, alpha: true)
        for f in 0..<4 {
            for y in (f * 3)..<(f * 3 + 6) {
                for x in (f * 4)..<(f * 4 + 8) {
                    let i = (y * w + x) * 4
                    canvas.replaceSubrange(i..<(i + 4), with: [UInt8(f * 60), 200, UInt8(255 - f * 50), UInt8(100 + f * 40)])
                }
            }
            frames.append(canvas)
        }
        let pointers = frames.map { UnsafePointer<UInt8>?($0.withUnsafeBufferPointer { UnsafePointer(strdupBytes($0)) }) }
        defer { pointers.forEach { free(UnsafeMutableRawPointer(mutating: $0)) } }
        let data = anchorBytes { out, size in
            anchors_encode_webp_animation(pointers, Int32(frames.count), Int32(w), Int32(h), 40, out, size)
        }!
        let all = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(data)
        XCTAssertEqual(all.frameCount, 4)
        XCTAssertEqual(all.frameDelays, [40, 40, 40, 40])
        for f in 0..<4 {
            XCTAssertEqual(all.packedPixels(frame: f), Pixels.premultiplied(frames[f]), "frame \(f)")
        }
        let first = try ImageDecoder().decode(data)
        XCTAssertEqual(first.frameCount, 1)
        XCTAssertEqual(first.packedPixels(), Pixels.premultiplied(frames[0]))
        XCTAssertEqual(try ImageDecoder.info(data).frameCount, 4)
    }

    func testTruncatedAndLimited() {
        let data = webp(Pixels.pattern(width: 64, height: 40), 64, 40, quality: 80)
        XCTAssertThrowsError(try ImageDecoder().decode(Array(data[0..<(data.count / 2)])))
        XCTAssertThrowsError(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxPixels: 100))).decode(data)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .limitExceeded, "\(error)")
        }
    }
}

/// A malloc'd copy of `bytes` (C callers keep pointers past the closure).
private func strdupBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
    let p = malloc(bytes.count)!.assumingMemoryBound(to: UInt8.self)
    p.initialize(from: bytes.baseAddress!, count: bytes.count)
    return p
}
