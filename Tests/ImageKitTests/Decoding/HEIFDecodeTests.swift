import CImageCore
import Foundation
import ImageKit
import XCTest

/// HEIC/HEIF through libheif: third-party files (Tests/Fixtures/heic) against heif-convert's
/// pixels, orientation from irot/imir, embedded thumbnails, alpha, limits and hostile input.
final class HEIFDecodeTests: XCTestCase {
    private func fixtures() throws -> FixtureReferences { try FixtureReferences("heic") }

    func testEveryFileMatchesHeifConvert() throws {
        let (exact, psnr) = try fixtures().checkAll()
        XCTAssertEqual(exact, 8)
        XCTAssertEqual(psnr, 0)
    }

    func testFormatsAreDecodableAndProbed() throws {
        XCTAssertTrue(ImageFormat.heic.isDecodable)
        XCTAssertTrue(ImageFormat.heif.isDecodable)
        let f = try fixtures()
        let info = try ImageDecoder.info(try f.bytes("MIAF002.heic"))
        XCTAssertEqual(info.format, .heic)
        XCTAssertEqual(info.width, 2048)
        XCTAssertEqual(info.height, 2048)
        XCTAssertEqual(info.bitDepth, 10)
        XCTAssertEqual(info.frameCount, 1)
        XCTAssertFalse(info.hasAlpha)
        XCTAssertTrue(try ImageDecoder.info(try f.bytes("colors-with-alpha.heic")).hasAlpha)
        XCTAssertEqual(try ImageDecoder.info(try f.bytes("rainbow-451x461.heic")).iccProfileSpace, .rgb)
    }

    /// A file whose brands name no HEVC brand is HEIF (mif1 only), and decodes the same.
    func testGenericHEIFBrandDecodes() throws {
        let f = try fixtures()
        var bytes = try f.bytes("C042.heic")
        // ftyp: major "mif1", compatible "mif1", "heic": the last becomes "mif1" too.
        let heic = Array("heic".utf8)
        let at = try XCTUnwrap((16..<40).first { Array(bytes[$0..<$0 + 4]) == heic })
        bytes.replaceSubrange(at..<at + 4, with: Array("mif1".utf8))
        XCTAssertEqual(ImageFormat(detecting: bytes), .heif)
        let image = try ImageDecoder().decode(bytes)
        XCTAssertEqual(image.sourceFormat, .heif)
        XCTAssertEqual(FixtureReferences.sha256(image), f.files["C042.heic"]?.sha256)
    }

    /// libheif applies irot/imir; the image reports them as an EXIF orientation, and with
    /// applyOrientation false returns the coded pixels that orientation turns into the default.
    func testOrientationFromIrotAndImir() throws {
        let f = try fixtures()
        let bytes = try f.bytes("C042.heic")  // imir axis 0: a top-bottom mirror
        let upright = try ImageDecoder().decode(bytes)
        XCTAssertEqual(upright.orientation, 4)
        XCTAssertTrue(upright.isOrientationApplied)
        let stored = try ImageDecoder(options: DecodeOptions(applyOrientation: false)).decode(bytes)
        XCTAssertEqual(stored.orientation, 4)
        XCTAssertFalse(stored.isOrientationApplied)
        XCTAssertEqual(FixtureReferences.oriented(stored.packedPixels(), width: stored.width, height: stored.height,
                                                  orientation: 4), upright.packedPixels())
        XCTAssertEqual(try ImageDecoder.info(bytes).orientation, 4)

        // clap + irot + imir: upright 360x640; kept, the whole coded 1280x720 (libheif's one switch
        // also leaves the clean-aperture crop out).
        let miaf = try f.bytes("MIAF007.heic")
        let turned = try ImageDecoder().decode(miaf)
        XCTAssertEqual(turned.orientation, 5)
        XCTAssertEqual([turned.width, turned.height], [360, 640])
        let coded = try ImageDecoder(options: DecodeOptions(applyOrientation: false)).decode(miaf)
        XCTAssertEqual([coded.width, coded.height], [1280, 720])
        XCTAssertFalse(coded.isOrientationApplied)
    }

    func testThumbnailsUseTheEmbeddedOneWhenLargeEnough() throws {
        let f = try fixtures()
        let bytes = try f.bytes("example.heic")  // 1280x854 with a 320x212 thumbnail
        var stats = DecodeStatistics()
        let small = try bytes.withUnsafeBytes { buffer in
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 256, height: 256)))
                .decode(buffer, statistics: &stats)
        }
        XCTAssertEqual([small.width, small.height], [256, 171])
        XCTAssertEqual(stats.codecSize, PixelSize(width: 320, height: 212))
        let large = try bytes.withUnsafeBytes { buffer in
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 640, height: 640)))
                .decode(buffer, statistics: &stats)
        }
        XCTAssertEqual([large.width, large.height], [640, 427])
        XCTAssertEqual(stats.codecSize, PixelSize(width: 1280, height: 854))
        // The two agree on the picture (the embedded thumbnail is a smaller encoding of it).
        let fromFull = try ImageResizer(size: PixelSize(width: 256, height: 171), mode: .stretch).resize(large)
        XCTAssertGreaterThan(Quality.psnr(small, fromFull), 25)
    }

    func testOpaqueThumbnailsAverageTheYCbCrPlanes() throws {
        let f = try fixtures()
        // 8-bit 4:2:0 without an embedded thumbnail; rainbow carries an ICC profile.
        for (file, box, codec) in [("C042.heic", 160, PixelSize(width: 320, height: 180)),
                                   ("rainbow-451x461.heic", 64, PixelSize(width: 226, height: 231))] {
            let bytes = try f.bytes(file)
            var stats = DecodeStatistics()
            let thumbnail = try bytes.withUnsafeBytes {
                try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: box)))
                    .decode($0, statistics: &stats)
            }
            // libheif hands over its planes; they are box-averaged to twice the output or more.
            XCTAssertEqual(stats.codecSize, codec, file)
            let full = try ImageDecoder().decode(bytes)
            let resized = try ImageResizer(size: PixelSize(width: thumbnail.width, height: thumbnail.height),
                                           mode: .stretch).resize(full)
            let psnr = Quality.psnr(thumbnail, resized)
            XCTAssertGreaterThanOrEqual(psnr, 40, "\(file): thumbnail against libheif's RGBA, resized: \(psnr) dB")
        }
    }

    func testTenBitThumbnailAndAlpha() throws {
        let f = try fixtures()
        var stats = DecodeStatistics()
        let ten = try f.bytes("MIAF002.heic")  // 2048x2048 10-bit, 160x160 8-bit thumbnail
        let thumb = try ten.withUnsafeBytes { buffer in
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 100, height: 100)))
                .decode(buffer, statistics: &stats)
        }
        XCTAssertEqual([thumb.width, thumb.height], [100, 100])
        XCTAssertEqual(stats.codecSize, PixelSize(width: 160, height: 160))

        let alpha = try ImageDecoder().decode(try f.bytes("colors-with-alpha.heic"))
        XCTAssertFalse(alpha.isOpaque)
        let pixels = alpha.packedPixels()
        var translucent = 0
        for i in stride(from: 0, to: pixels.count, by: 4) {
            XCTAssertLessThanOrEqual(max(pixels[i], pixels[i + 1], pixels[i + 2]), pixels[i + 3])
            if pixels[i + 3] > 0 && pixels[i + 3] < 255 { translucent += 1 }
        }
        XCTAssertGreaterThan(translucent, 0)
        let withThumbnail = try f.bytes("colors-with-alpha-thumbnail.heic")
        let small = try withThumbnail.withUnsafeBytes { buffer in
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 32, height: 32)))
                .decode(buffer, statistics: &stats)
        }
        XCTAssertEqual(stats.codecSize, PixelSize(width: 64, height: 64))
        XCTAssertFalse(small.isOpaque)
    }

    func testTruncatedFilesFailCleanly() throws {
        let bytes = try fixtures().bytes("example.heic")
        for keep in [40, 400, bytes.count / 4, bytes.count / 2, bytes.count - 100] {
            let error = try XCTUnwrap(FixtureReferences.failure(Array(bytes.prefix(keep))), "\(keep)")
            XCTAssertTrue([.truncated, .corrupt].contains(error.code), "\(keep): \(error.message)")
            XCTAssertTrue(error.message.hasPrefix("HEIC: "), error.message)
        }
    }

    /// A coded size (ispe) of 30000 x 30000 behind a 32 x 32 clean aperture is refused from the
    /// header, before libheif decodes.
    func testHugeDeclaredSizeIsRefusedBeforeDecoding() throws {
        var bytes = try fixtures().bytes("hevc32.heif")
        let ispe = Array("ispe".utf8)
        let at = try XCTUnwrap((0..<bytes.count - 16).first { Array(bytes[$0..<$0 + 4]) == ispe })
        let side: [UInt8] = [0, 0, 0x75, 0x30]  // 30000
        bytes.replaceSubrange(at + 8..<at + 12, with: side)
        bytes.replaceSubrange(at + 12..<at + 16, with: side)
        var stats = DecodeStatistics()
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &stats) }) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, .limitExceeded)
            XCTAssertEqual(e?.message.contains("30000x30000"), true, e?.message ?? "")
        }
        XCTAssertLessThan(stats.peakBytes, 1 << 20)
        XCTAssertNoThrow(try ImageDecoder.info(bytes))
    }

    /// An overlay (iovl) whose item data declares a 16705 x 16705 canvas behind a 66 x 64 ispe
    /// (found by fuzz_heif: libheif allocates the canvas before it checks it) is refused on the
    /// canvas's size, before libheif decodes.
    func testADerivedImagesCanvasMeetsTheLimits() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz-regressions/heif-overlay-canvas-over-the-limits.heic")
        let bytes = try Data(contentsOf: url)
        var stats = DecodeStatistics()
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &stats) }) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, .limitExceeded)
            XCTAssertEqual(e?.message.contains("16705x16705"), true, e?.message ?? "")
        }
        XCTAssertLessThan(stats.peakBytes, 1 << 20)
    }

    func testLimitsAndCancellation() throws {
        let bytes = try fixtures().bytes("C042.heic")
        let tooMany = FixtureReferences.failure(bytes, DecodeOptions(limits: DecodeLimits(maxPixels: 1000)))
        XCTAssertEqual(tooMany?.code, .limitExceeded)
        let tooBig = FixtureReferences.failure(bytes, DecodeOptions(limits: DecodeLimits(maxInputBytes: 1000)))
        XCTAssertEqual(tooBig?.code, .limitExceeded)
        let memory = FixtureReferences.failure(bytes, DecodeOptions(limits: DecodeLimits(maxMemoryBytes: 4 << 20)))
        XCTAssertEqual(memory?.code, .limitExceeded)
        for thumbnail: UInt32 in [0, 100] {
            let (st, message) = FixtureReferences.decodeThroughC(bytes, cancelFlag: 1, thumbnail: thumbnail)
            XCTAssertEqual(st, IC_ERR_CANCELLED)
            XCTAssertEqual(message, "HEIC: decode cancelled")
        }
    }

    func testGarbageFailsCleanly() throws {
        var garbage = Array("\0\0\0\u{18}ftypheic\0\0\0\0mif1heic".utf8)
        garbage += (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) }
        let error = try XCTUnwrap(FixtureReferences.failure(garbage))
        XCTAssertTrue([.corrupt, .truncated].contains(error.code), error.message)
        XCTAssertTrue(error.message.hasPrefix("HEIC: "), error.message)
        XCTAssertThrowsError(try ImageDecoder.info(garbage))
    }
}
