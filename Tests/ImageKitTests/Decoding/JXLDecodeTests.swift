import CImageCore
import Foundation
import ImageKit
import XCTest

/// JPEG XL through libjxl: the libjxl conformance files (Tests/Fixtures/jxl) against djxl's
/// pixels, orientation, thumbnails, alpha, animation, limits and hostile input.
final class JXLDecodeTests: XCTestCase {
    private func fixtures() throws -> FixtureReferences { try FixtureReferences("jxl") }

    func testEveryFileMatchesDjxl() throws {
        let (exact, psnr) = try fixtures().checkAll()
        XCTAssertEqual(exact, 4)
        XCTAssertEqual(psnr, 3)
    }

    func testProbe() throws {
        XCTAssertTrue(ImageFormat.jxl.isDecodable)
        let f = try fixtures()
        let animation = try ImageDecoder.info(try f.bytes("animation_spline.jxl"))
        XCTAssertEqual(animation.format, .jxl)
        XCTAssertEqual(animation.frameCount, 60)
        XCTAssertEqual([animation.width, animation.height], [320, 320])
        let logo = try ImageDecoder.info(try f.bytes("sunset_logo.jxl"))
        XCTAssertEqual([logo.width, logo.height], [1386, 924])  // as stored
        XCTAssertEqual(logo.orientation, 7)
        XCTAssertEqual(logo.bitDepth, 10)
        XCTAssertTrue(logo.hasAlpha)
        XCTAssertEqual(try ImageDecoder.info(try f.bytes("bench_oriented_brg.jxl")).iccProfileSpace, .rgb)
        XCTAssertNil(try ImageDecoder.info(try f.bytes("opsin_inverse.jxl")).iccProfileSpace)
    }

    func testAnimationFramesAndDelays() throws {
        let bytes = try fixtures().bytes("animation_spline.jxl")
        let all = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(bytes)
        XCTAssertEqual(all.frameCount, 60)
        XCTAssertEqual(all.frameDelays, Array(repeating: 20, count: 60))
        XCTAssertEqual(all.loopCount, 0)
        XCTAssertNotEqual(all.packedPixels(frame: 0), all.packedPixels(frame: 30))
        let first = try ImageDecoder().decode(bytes)
        XCTAssertEqual(first.frameCount, 1)
        XCTAssertEqual(first.packedPixels(), all.packedPixels(frame: 0))
        // Every frame of a thumbnail.
        let small = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false,
                                                            thumbnailPixelSize: PixelSize(width: 64, height: 64)))
            .decode(bytes)
        XCTAssertEqual([small.width, small.height, small.frameCount], [64, 64, 60])
    }

    func testTooManyFramesAreRefusedBeforeDecoding() throws {
        let bytes = try fixtures().bytes("animation_spline.jxl")
        let error = FixtureReferences.failure(bytes, DecodeOptions(limits: DecodeLimits(maxFrames: 10), firstFrameOnly: false))
        XCTAssertEqual(error?.code, .limitExceeded)
        XCTAssertEqual(error?.message.contains("over the limit of 10"), true, error?.message ?? "")
        // The first frame alone is within the limit.
        XCTAssertNoThrow(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxFrames: 10))).decode(bytes))
    }

    /// libjxl orients; with applyOrientation false the stored pixels come back, and the reported
    /// orientation turns them into the default decode.
    func testOrientation() throws {
        let f = try fixtures()
        for (name, orientation) in [("sunset_logo.jxl", 7), ("bench_oriented_brg.jxl", 5)] {
            let bytes = try f.bytes(name)
            let upright = try ImageDecoder().decode(bytes)
            XCTAssertEqual(upright.orientation, orientation, name)
            XCTAssertTrue(upright.isOrientationApplied, name)
            let stored = try ImageDecoder(options: DecodeOptions(applyOrientation: false)).decode(bytes)
            XCTAssertEqual(stored.orientation, orientation, name)
            XCTAssertFalse(stored.isOrientationApplied, name)
            XCTAssertEqual([stored.width, stored.height], [upright.height, upright.width], name)
            XCTAssertEqual(FixtureReferences.oriented(stored.packedPixels(), width: stored.width, height: stored.height,
                                                      orientation: orientation), upright.packedPixels(), name)
        }
    }

    func testThumbnailsAndAlpha() throws {
        let f = try fixtures()
        let logo = try f.bytes("sunset_logo.jxl")  // upright 924x1386
        var stats = DecodeStatistics()
        let thumb = try logo.withUnsafeBytes { buffer in
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 256, height: 256)))
                .decode(buffer, statistics: &stats)
        }
        XCTAssertEqual([thumb.width, thumb.height], [171, 256])
        XCTAssertEqual(stats.codecSize, PixelSize(width: 924, height: 1386))
        let full = try ImageDecoder().decode(logo)
        let resized = try ImageResizer(size: PixelSize(width: 171, height: 256), mode: .stretch).resize(full)
        XCTAssertGreaterThan(Quality.psnr(thumb, resized), 40)

        let straight = try ImageDecoder().decode(try f.bytes("alpha_nonpremultiplied.jxl"))
        let associated = try ImageDecoder().decode(try f.bytes("alpha_premultiplied.jxl"))
        for image in [straight, associated] {
            XCTAssertFalse(image.isOpaque)
            let p = image.packedPixels()
            for i in stride(from: 0, to: p.count, by: 4) where max(p[i], p[i + 1], p[i + 2]) > p[i + 3] {
                XCTFail("colour above alpha at pixel \(i / 4)")
                break
            }
        }
    }

    func testTruncatedFilesFailAsTruncated() throws {
        let f = try fixtures()
        for name in ["opsin_inverse.jxl", "animation_spline.jxl", "bench_oriented_brg.jxl"] {
            let bytes = try f.bytes(name)
            // From 12 bytes: the container's signature (bench_oriented_brg.jxl) is that long.
            for keep in [12, 20, bytes.count / 10, bytes.count / 2, bytes.count - 10] {
                let error = FixtureReferences.failure(Array(bytes.prefix(keep)), DecodeOptions(firstFrameOnly: false))
                XCTAssertEqual(error?.code, .truncated, "\(name) \(keep): \(error?.message ?? "")")
                XCTAssertEqual(error?.message, "JPEG XL: truncated after \(keep) bytes")
            }
        }
    }

    /// A codestream whose header claims 12000 x 12000 (and nothing more): refused at the header.
    func testHugeDeclaredSizeIsRefusedBeforeDecoding() throws {
        var bits = BitWriter()
        bits.write(0, 1)  // small: no
        bits.write(2, 2)  // height: U32 selector 2 (18 bits, + 1)
        bits.write(12000 - 1, 18)
        bits.write(0, 3)  // ratio 0: width follows
        bits.write(2, 2)
        bits.write(12000 - 1, 18)
        bits.write(1, 1)  // image metadata: all default
        let bytes: [UInt8] = [0xFF, 0x0A] + bits.bytes
        var stats = DecodeStatistics()
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &stats) }) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, .limitExceeded)
            XCTAssertEqual(e?.message.contains("12000x12000"), true, e?.message ?? "")
        }
        XCTAssertLessThan(stats.peakBytes, 1 << 20)
        let info = try ImageDecoder.info(bytes)
        XCTAssertEqual([info.width, info.height], [12000, 12000])
    }

    func testLimitsCancellationAndGarbage() throws {
        let bytes = try fixtures().bytes("opsin_inverse.jxl")
        XCTAssertEqual(FixtureReferences.failure(bytes, DecodeOptions(limits: DecodeLimits(maxPixels: 1000)))?.code,
                       .limitExceeded)
        XCTAssertEqual(FixtureReferences.failure(bytes, DecodeOptions(limits: DecodeLimits(maxMemoryBytes: 1 << 20)))?.code,
                       .limitExceeded)
        for thumbnail: UInt32 in [0, 100] {
            let (st, message) = FixtureReferences.decodeThroughC(bytes, cancelFlag: 1, thumbnail: thumbnail)
            XCTAssertEqual(st, IC_ERR_CANCELLED)
            XCTAssertEqual(message, "JPEG XL: decode cancelled")
        }
        let garbage: [UInt8] = [0xFF, 0x0A] + (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 11) }
        let error = try XCTUnwrap(FixtureReferences.failure(garbage))
        XCTAssertTrue([.corrupt, .truncated, .limitExceeded].contains(error.code), error.message)
        XCTAssertTrue(error.message.hasPrefix("JPEG XL: "), error.message)
    }
}

/// Bits least significant first, as a JPEG XL codestream stores them.
private struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 0

    mutating func write(_ value: UInt32, _ count: Int) {
        for i in 0..<count {
            if used % 8 == 0 { bytes.append(0) }
            if (value >> UInt32(i)) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(1 << (used % 8)) }
            used += 1
        }
    }
}
