import CAnchors
import CImageCore
import Foundation
import Glibc
import ImageKit
import XCTest

/// HEIC/HEIF through libheif: third-party files (Tests/Fixtures/heic) against references from
/// heif-convert and pillow-heif, 10/12-bit samples rounded to 8 bits, nclx colour, orientation
/// from irot/imir, embedded thumbnails, alpha, limits and hostile input.
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

    /// An AV1-coded image in a file whose brands are not AVIF's is sniffed as HEIF and refused
    /// before libheif decodes it (it would hand it to dav1d with no limit on its frame size;
    /// ImageKit decodes AV1 through libavif, with the decode limits); branded AVIF, it decodes.
    func testAnAV1ImageInAFileNotBrandedAVIFIsRefused() throws {
        var bytes = try fixture("avif/kodim03_yuv420_8bpc.avif")
        XCTAssertNoThrow(try ImageDecoder().decode(bytes))
        // ftyp: every "avif" brand (the major one and a compatible one) becomes "mif1".
        let avif = Array("avif".utf8)
        for at in 8..<28 where Array(bytes[at..<at + 4]) == avif {
            bytes.replaceSubrange(at..<at + 4, with: Array("mif1".utf8))
        }
        XCTAssertEqual(ImageFormat(detecting: bytes), .heif)
        XCTAssertThrowsError(try ImageDecoder().decode(bytes)) { error in
            XCTAssertEqual(error as? ImageKitError,
                           .unsupportedFeature("HEIF: an AV1-coded image in a file not branded AVIF (AV1 is decoded as AVIF)"))
        }
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
        let bytes = try fixture("fuzz-regressions/heif-overlay-canvas-over-the-limits.heic")
        var stats = DecodeStatistics()
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &stats) }) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, .limitExceeded)
            XCTAssertEqual(e?.message.contains("16705x16705"), true, e?.message ?? "")
        }
        XCTAssertLessThan(stats.peakBytes, 1 << 20)
    }

    /// An overlay ('iovl') item that is the primary image's alpha (found by fuzz_heif: libheif
    /// decodes it at the canvas its data declares, an 819 MB allocation): its canvas meets the
    /// limits before libheif reads it, as a derived primary image's does.
    func testAnOverlayAlphaCanvasOverTheLimitsIsRefusedBeforeAllocating() throws {
        let bytes = try fixture("fuzz-regressions/heif-overlay-alpha-canvas.heic")
        var stats = DecodeStatistics()
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &stats) }) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .limitExceeded, "\(error)")
        }
        XCTAssertLessThan(stats.peakBytes, 1 << 20)
    }

    /// A file of Tests/Fixtures, by its path there.
    private func fixture(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/\(path)"))
    }

    /// A file of Fixtures/heic-built (scripts/make_heif_built_fixtures.py).
    private func built(_ name: String) throws -> Data { try fixture("heic-built/\(name)") }

    /// An HEVC parameter set declaring a 4096 x 4096 picture behind a 64 x 64 ispe (the shape of
    /// fuzz_heif's out-of-memory in CI: libde265 allocates the picture at its SPS's size and
    /// libheif 1.15 converts all of it, 150 MB here, whatever ispe says) is refused on the
    /// SPS's size before libheif decodes; with limits above it, it decodes.
    func testAnHEVCPictureLargerThanItsIspeMeetsTheLimits() throws {
        let bytes = try built("sps-larger-than-ispe.heic")
        let limited = ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxPixels: 1 << 20)))
        var stats = DecodeStatistics()
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try limited.decode($0, statistics: &stats) }) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, .limitExceeded)
            XCTAssertEqual(e?.message.contains("4096x4096"), true, e?.message ?? "")
        }
        XCTAssertLessThan(stats.peakBytes, 1 << 20)
        XCTAssertEqual(try ImageDecoder.info(bytes).width, 64)
        XCTAssertNoThrow(try ImageDecoder().decode(bytes))
    }

    /// A grid of four 64 x 64 tiles decodes to its 128 x 128 canvas: the control of the two
    /// hostile grids below, built the same way.
    func testAGridDecodesItsTiles() throws {
        let image = try ImageDecoder().decode(try built("grid-2x2.heic"))
        XCTAssertEqual([image.width, image.height], [128, 128])
        let px = image.packedPixels(frame: 0)
        let expected: [Int] = [200, 30, 30, 255]
        for i in stride(from: 0, to: px.count, by: 4) {
            let pixel = (0..<4).map { Int(px[i + $0]) }
            let near = zip(pixel, expected).allSatisfy { abs($0 - $1) <= 4 }
            if !near || pixel[3] != 255 {
                XCTFail("pixel \(i / 4) is \(pixel)")
                break
            }
        }
    }

    /// Images that derive from themselves, or carry themselves as auxiliary images, are refused
    /// before libheif decodes them: libheif 1.15 follows them until the stack overflows (a
    /// crash before this check). A grid listing itself as a tile, two pictures each the
    /// other's alpha, and fuzz_heif's grid whose iref entry declares a size past its box (libheif
    /// reads iref's entries without their sizes); every way of decoding and probing.
    func testImagesThatDeriveFromThemselvesAreRefused() throws {
        let files = [try built("grid-is-its-own-tile.heic"), try built("each-the-others-alpha.heic"),
                     try fixture("fuzz-regressions/heif-grid-own-tile-iref-entry-size-unread.heic")]
        let expected = ImageKitError.corrupt(
            "HEIC: image 1 derives from images, or carries auxiliary images, more than 4 deep (or itself)")
        for bytes in files {
            for options in [DecodeOptions(), DecodeOptions(thumbnailPixelSize: PixelSize(square: 16))] {
                XCTAssertThrowsError(try ImageDecoder(options: options).decode(bytes)) { error in
                    XCTAssertEqual(error as? ImageKitError, expected)
                }
            }
            _ = try? ImageDecoder.info(bytes)
        }
    }

    /// A grid whose 1600 tiles all start inside its 40 x 40 canvas (each a 64 x 64 picture behind a
    /// 1 x 1 ispe) is refused before libheif decodes 6.5 M pixels for 1600 shown: a tiny file
    /// would otherwise cost minutes with more tiles or larger pictures.
    func testAGridWhoseTilesOverdrawItsCanvasIsRefused() throws {
        XCTAssertThrowsError(try ImageDecoder().decode(try built("grid-tiles-overdraw-canvas.heic"))) { error in
            XCTAssertEqual(error as? ImageKitError,
                           .corrupt("HEIC: derived image 1's 1600 inputs decode 6553600 pixels for a 40x40 canvas"))
        }
    }

    /// A grid whose tiles would leave part of its canvas unwritten is refused: libheif 1.15
    /// allocates the canvas without clearing it and places each tile at the sum of the ispe
    /// sizes before it, so those pixels would be whatever the heap held (another request's
    /// image). Made from `grid-2x2.heic` (a 128 x 128 canvas, four 64 x 64 tiles): its tile's
    /// ispe renamed (every tile placed at 0, 0 — fuzz_heif's find), and its canvas widened to
    /// 160 (two columns of 64 reach 128). The control decodes in testAGridDecodesItsTiles.
    func testAGridWhoseTilesLeaveItsCanvasUnwrittenIsRefused() throws {
        let grid = try built("grid-2x2.heic")
        let ispe = Data("ispe".utf8)
        let tileISPE = try XCTUnwrap(grid.range(of: ispe, options: .backwards))
        XCTAssertNotEqual(tileISPE, grid.range(of: ispe), "grid-2x2.heic has the grid's ispe and the tile's")
        var withoutISPE = grid
        withoutISPE.replaceSubrange(tileISPE, with: Data("is_e".utf8))
        var wider = grid
        let canvas = Data([0, 0, 1, 1, 0, 128, 0, 128]) // version, flags, rows - 1, columns - 1, 128, 128
        let at = try XCTUnwrap(grid.range(of: canvas))
        wider.replaceSubrange(at, with: Data([0, 0, 1, 1, 0, 160, 0, 128]))
        for (bytes, canvas) in [(withoutISPE, "128x128"), (wider, "160x128")] {
            for options in [DecodeOptions(), DecodeOptions(thumbnailPixelSize: PixelSize(square: 16))] {
                XCTAssertThrowsError(try ImageDecoder(options: options).decode(bytes)) { error in
                    XCTAssertEqual(error as? ImageKitError, .corrupt(
                        "HEIC: grid image 1's tiles do not cover its \(canvas) canvas (each must be an HEVC image of one "
                            + "size, by its ispe, that decodes to at least that size)"))
                }
            }
        }
    }

    /// The number of items is bounded by what an image within the limits needs (a grid of
    /// 256 x 256-pixel tiles for it and its alpha, and 256 more) before libheif reads them, in
    /// time that grows with their square: 300 items are refused at 1 M pixels (288 allowed),
    /// and decode at the default limits.
    func testMoreItemsThanAnImageWithinTheLimitsNeedsAreRefused() throws {
        let bytes = try built("300-items.heic")
        let limited = ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxPixels: 1 << 20)))
        XCTAssertThrowsError(try limited.decode(bytes)) { error in
            XCTAssertEqual(error as? ImageKitError, .limitExceeded(
                "HEIC: 300 items, more than the 288 an image within the limit of 1048576 pixels needs"))
        }
        let image = try ImageDecoder().decode(bytes)
        XCTAssertEqual([image.width, image.height], [64, 64])
        XCTAssertEqual(try ImageDecoder.info(bytes).width, 64)
    }

    /// A probe has no limits of its own, but bounds a file's items as a decode within the default
    /// limits does (2304): a file of 2305 items (libheif would read 20 000 of them for 8 s) is
    /// refused by both before libheif reads it.
    func testAProbeBoundsTheItemsAsADecodeWithinTheDefaultLimits() throws {
        let bytes = Self.heifListing(items: 2305)
        let expected = ImageKitError.limitExceeded(
            "HEIC: 2305 items, more than the 2304 an image within the limit of 67108864 pixels needs")
        XCTAssertThrowsError(try ImageDecoder.info(bytes)) { error in
            XCTAssertEqual(error as? ImageKitError, expected)
        }
        XCTAssertThrowsError(try ImageDecoder().decode(bytes)) { error in
            XCTAssertEqual(error as? ImageKitError, expected)
        }
    }

    /// A HEIC file whose meta box lists `items` items (`mime`, no data), the first primary.
    private static func heifListing(items: Int) -> [UInt8] {
        func be(_ value: Int, _ bytes: Int) -> [UInt8] {
            (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { be(8 + body.count, 4) + Array(type.utf8) + body }
        func fullBox(_ type: String, _ body: [UInt8]) -> [UInt8] { box(type, [0, 0, 0, 0] + body) }
        let entries = (1...items).flatMap { id in
            box("infe", [2, 0, 0, 0] + be(id, 2) + be(0, 2) + Array("mime".utf8) + [0, 0])
        }
        let meta = fullBox("meta", fullBox("hdlr", [UInt8](repeating: 0, count: 4) + Array("pict".utf8)
                                            + [UInt8](repeating: 0, count: 13))
                                   + fullBox("pitm", be(1, 2)) + fullBox("iinf", be(items, 2) + entries))
        return box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)) + meta
    }

    /// Two file-level meta boxes (found by fuzz_heif: libheif 1.15 mixes their items and
    /// properties, allocates 760 MB and then reads out of bounds) are refused before libheif
    /// reads the file, by decode and probe alike; the first part alone decodes.
    func testASecondFileLevelMetaBoxIsRefused() throws {
        let bytes = try fixture("fuzz-regressions/heif-two-file-level-meta-boxes.heic")
        let expected = ImageKitError.corrupt("HEIC: more than one file-level meta box")
        for limits in [DecodeLimits(), DecodeLimits(maxPixels: 1 << 18)] {
            XCTAssertThrowsError(try ImageDecoder(options: DecodeOptions(limits: limits)).decode(bytes)) { error in
                XCTAssertEqual(error as? ImageKitError, expected)
            }
        }
        XCTAssertThrowsError(try ImageDecoder.info(bytes)) { error in
            XCTAssertEqual(error as? ImageKitError, expected)
        }
        // Up to the second ftyp (byte 523): one meta box, which passes; its mutated HEVC stream
        // is what libde265 then reports damaged.
        XCTAssertThrowsError(try ImageDecoder().decode(bytes.prefix(523))) { error in
            XCTAssertEqual(error as? ImageKitError, Self.damagedStream)
        }
    }

    /// A picture without SAO is decoded into the zeroed buffers ImageKit's HEVC plugin allocates
    /// (decode/heif/heif_hevc.c); no other fixture has one. Bit-exact with heif-convert (libheif 1.15's
    /// own plugin): the SHA-256 of its RGBA output.
    func testAPictureWithoutSAODecodesIntoImageKitsBuffersAsHeifConvertDoes() throws {
        let image = try ImageDecoder().decode(try built("no-sao.heic"))
        XCTAssertEqual([image.width, image.height], [200, 120])
        XCTAssertEqual(FixtureReferences.sha256(image), "ad3f47bd843fd69d1bfc7526d212cff2bead7a2b17091bf3d5671453a295140d")
        let thumbnail = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 50))).decode(
            try built("no-sao.heic"))
        XCTAssertEqual([thumbnail.width, thumbnail.height], [50, 30])
    }

    /// What a decode of an HEVC stream libde265 reports damaged (a CTB outside the picture) throws.
    private static let damagedStream = ImageKitError.corrupt(
        "HEIC: cannot decode the image: Decoder plugin generated an error: Unspecified: "
            + "CTB outside of image area (concealing stream error...)")

    /// An HEVC stream libde265 cannot decode whole leaves blocks of its picture unwritten, which
    /// libheif 1.15 hands on uncleared: found by fuzz_heif as two decodes of this file whose
    /// bottom rows differed (earlier heap contents). The decode fails with libde265's warning,
    /// the same every time; a small thumbnail reads the file's embedded thumbnail, whose stream
    /// is cut.
    func testAnHEVCStreamLibde265ReportsDamagedIsRefused() throws {
        let bytes = try fixture("fuzz-regressions/heif-damaged-stream-unwritten-rows.heic")
        for options in [DecodeOptions(), DecodeOptions(usesHelperThread: true)] {
            XCTAssertThrowsError(try ImageDecoder(options: options).decode(bytes)) { error in
                XCTAssertEqual(error as? ImageKitError, Self.damagedStream)
            }
        }
        let thumbnail = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 16)))
        XCTAssertThrowsError(try thumbnail.decode(bytes)) { error in
            XCTAssertEqual(error as? ImageKitError, .truncated(
                "HEIC: cannot decode the image: Decoder plugin generated an error: Unexpected end of file: "
                    + "NAL unit past the data"))
        }
        XCTAssertEqual(try ImageDecoder.info(bytes).width, 72, "the headers are whole")
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

    // MARK: - 10 and 12 bits

    /// HEIC from libheif's x265 encoder (Tests/CAnchors): RGBA `samples`, 4 a pixel, of `bits`.
    private func encode(_ samples: [UInt16], width: Int, height: Int, bits: Int, alpha: Bool = false,
                        nclx: (primaries: Int32, transfer: Int32, matrix: Int32)? = nil,
                        icc: [UInt8] = []) throws -> [UInt8] {
        var opts = anchors_heic_options()
        opts.quality = 90
        opts.bits = Int32(bits)
        opts.alpha = alpha ? 1 : 0
        if let nclx {
            opts.nclx = 1
            (opts.primaries, opts.transfer, opts.matrix) = nclx
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        let rc = icc.withUnsafeBufferPointer { profile in
            opts.icc = profile.baseAddress
            opts.icc_size = profile.count
            if bits == 8 {
                return samples.map { UInt8($0) }.withUnsafeBytes {
                    anchors_encode_heic_with($0.baseAddress, Int32(width), Int32(height), &opts, &out, &size)
                }
            }
            return samples.withUnsafeBytes {
                anchors_encode_heic_with($0.baseAddress, Int32(width), Int32(height), &opts, &out, &size)
            }
        }
        XCTAssertEqual(rc, 0, "libheif's HEVC encoder")
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: try XCTUnwrap(out), count: size))
    }

    /// libheif's own 16-bit decode of `file`: RGBA samples of `bits` (alpha at the maximum
    /// without an alpha plane).
    private func samples16(_ file: [UInt8]) throws -> (samples: [UInt16], bits: Int) {
        let info = try ImageDecoder.info(file)
        var samples = [UInt16](repeating: 0, count: info.width * info.height * 4)
        var w: Int32 = 0, h: Int32 = 0, bits: Int32 = 0
        let rc = samples.withUnsafeMutableBufferPointer {
            anchors_decode_heic_samples(file, file.count, $0.baseAddress, $0.count, &w, &h, &bits)
        }
        XCTAssertEqual(rc, 0)
        XCTAssertEqual(Int(w) * Int(h), info.width * info.height)
        return (samples, Int(bits))
    }

    /// Premultiplied RGBA8 from 16-bit samples of `bits`, each reduced by `reduce` (v, max).
    private func premultiplied(_ s: [UInt16], bits: Int, _ reduce: (Int, Int) -> Int) -> [UInt8] {
        let max = (1 << bits) - 1
        var out = [UInt8](repeating: 0, count: s.count)
        for i in stride(from: 0, to: s.count, by: 4) {
            let a = reduce(Int(s[i + 3]), max)
            for c in 0..<3 { out[i + c] = UInt8((reduce(Int(s[i + c]), max) * a + 127) / 255) }
            out[i + 3] = UInt8(a)
        }
        return out
    }

    /// Fails with the number of differing bytes and the first, not the whole arrays.
    private func assertSame(_ a: [UInt8], _ b: [UInt8], _ what: String, file: StaticString = #filePath,
                            line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, what, file: file, line: line)
        let differ = a.indices.filter { $0 < b.count && a[$0] != b[$0] }
        XCTAssertTrue(differ.isEmpty, "\(what): \(differ.count) bytes differ, the first at \(differ.first ?? 0)",
                      file: file, line: line)
    }

    /// round(v * 255 / max), the reduction the HowFormatsDecode article states.
    private static func rounded(_ v: Int, _ max: Int) -> Int { (v * 255 + max / 2) / max }
    /// libheif 1.15's own 8-bit output: the low bits dropped.
    private static func truncated(_ v: Int, _ max: Int) -> Int { v >> (max.nonzeroBitCount - 8) }

    /// 10- and 12-bit samples are rounded to nearest, not truncated as libheif's 8-bit output
    /// is: MIAF002 (10-bit Main 10, also checked against pillow-heif in references.json), and
    /// libheif-encoded 10-bit RGBA (straight alpha, premultiplied after rounding) and 12-bit RGB,
    /// each against libheif's 16-bit decode rounded here.
    func testTenAndTwelveBitSamplesAreRoundedToNearest() throws {
        let w = 96, h = 64
        var files: [(String, [UInt8])] = [("MIAF002.heic", try fixtures().bytes("MIAF002.heic"))]
        for (bits, alpha) in [(10, true), (12, false)] {
            let max = (1 << bits) - 1
            var px = [UInt16](repeating: 0, count: w * h * 4)
            for y in 0..<h {
                for x in 0..<w {
                    let i = (y * w + x) * 4
                    px[i] = UInt16(x * max / (w - 1))
                    px[i + 1] = UInt16(y * max / (h - 1))
                    px[i + 2] = UInt16((x * 7 + y * 13) * max / (w * 7 + h * 13))
                    px[i + 3] = UInt16(alpha ? (x + y) * max / (w + h - 2) : max)
                }
            }
            files.append(("\(bits)-bit\(alpha ? " RGBA" : "")", try encode(px, width: w, height: h, bits: bits, alpha: alpha)))
        }
        for (name, file) in files {
            let (samples, bits) = try samples16(file)
            XCTAssertGreaterThan(bits, 8, name)
            let image = try ImageDecoder().decode(file)
            XCTAssertEqual(try ImageDecoder.info(file).bitDepth, bits, name)
            let expected = premultiplied(samples, bits: bits, Self.rounded)
            let truncated = premultiplied(samples, bits: bits, Self.truncated)
            XCTAssertNotEqual(expected, truncated, "\(name): rounding must differ from truncation somewhere")
            assertSame(image.packedPixels(), expected, name)
        }
    }

    /// A 10-bit picture without an embedded thumbnail is shrunk through the resampler from
    /// its rounded rows (the YCbCr box average is for 8-bit opaque pictures).
    func testTenBitThumbnailIsResampledFromTheRoundedRows() throws {
        let w = 320, h = 240, max = 1023
        var px = [UInt16](repeating: 0, count: w * h * 4)
        for i in 0..<w * h {
            let (x, y) = (i % w, i / w)
            px[i * 4] = UInt16(x * max / (w - 1))
            px[i * 4 + 1] = UInt16(y * max / (h - 1))
            px[i * 4 + 2] = UInt16((x + y) % 64 * 16)
            px[i * 4 + 3] = UInt16(max)
        }
        let file = try encode(px, width: w, height: h, bits: 10)
        var stats = DecodeStatistics()
        let thumbnail = try file.withUnsafeBytes {
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 40))).decode($0, statistics: &stats)
        }
        XCTAssertEqual([thumbnail.width, thumbnail.height], [40, 30])
        XCTAssertEqual(stats.codecSize, PixelSize(width: w, height: h))
        let full = try ImageDecoder().decode(file)
        let resized = try ImageResizer(size: PixelSize(width: 40, height: 30), mode: .stretch).resize(full)
        assertSame(thumbnail.packedPixels(), resized.packedPixels(), "thumbnail against the resized decode")
    }

    // MARK: - nclx colour

    /// Saturated colours (which Display P3 to sRGB changes) as 8-bit RGBA samples.
    private func colourful(width w: Int, height h: Int) -> [UInt16] {
        var px = [UInt16](repeating: 255, count: w * h * 4)
        for i in 0..<w * h {
            let (x, y) = (i % w, i / w)
            px[i * 4] = UInt16(x * 255 / (w - 1))
            px[i * 4 + 1] = UInt16(255 - y * 255 / (h - 1))
            px[i * 4 + 2] = UInt16((x / 8 + y / 8) % 2 * 255)
        }
        return px
    }

    /// An nclx box of Display P3 (primaries 12, sRGB transfer) converts as AVIF's does, through
    /// the same built P3 profile, which the image then carries: the result equals the untagged
    /// pixels in a PNG tagged with that profile, decoded by ImageKit. sRGB/BT.709 and BT.2020 PQ
    /// (HDR: out of scope) leave the pixels bit-identical to the untagged file; an ICC profile
    /// wins over the nclx box.
    func testNclxDisplayP3IsConvertedLikeAVIFs() throws {
        let w = 64, h = 48
        let px = colourful(width: w, height: h)
        // Full-range BT.601 (matrix 6) throughout, libheif's default without an nclx box: the same
        // coded pixels in every file.
        let untagged = try ImageDecoder().decode(try encode(px, width: w, height: h, bits: 8))
        XCTAssertFalse(untagged.isColorConverted)
        XCTAssertNil(untagged.iccProfile)

        let p3File = try encode(px, width: w, height: h, bits: 8, nclx: (12, 13, 6))
        let p3 = try ImageDecoder().decode(p3File)
        XCTAssertTrue(p3.isColorConverted)
        XCTAssertEqual(p3.iccProfileSpace, .rgb)
        XCTAssertNil(try ImageDecoder.info(p3File).iccProfileSpace)  // as AVIF's: no profile in the file
        let profile = try XCTUnwrap(p3.iccProfile)
        XCTAssertEqual(profile, try ImageDecoder().decode(try fixture("avif/kodim23_p3_cicp.avif")).iccProfile)
        let raw = try ImageDecoder(options: DecodeOptions(colorMode: .raw)).decode(p3File)
        XCTAssertFalse(raw.isColorConverted)
        assertSame(raw.packedPixels(), untagged.packedPixels(), "raw")
        XCTAssertNotEqual(p3.packedPixels(), untagged.packedPixels())
        let png = try ImageEncoder.encode(untagged, as: .png(), iccProfile: profile)
        let tagged = try ImageDecoder().decode(png)
        XCTAssertTrue(tagged.isColorConverted)
        assertSame(p3.packedPixels(), tagged.packedPixels(), "against the P3-tagged PNG")

        for (what, nclx) in [("sRGB", (Int32(1), Int32(13), Int32(6))), ("BT.2020 PQ", (9, 16, 6))] {
            let image = try ImageDecoder().decode(try encode(px, width: w, height: h, bits: 8, nclx: nclx))
            XCTAssertFalse(image.isColorConverted, what)
            XCTAssertNil(image.iccProfile, what)
            assertSame(image.packedPixels(), untagged.packedPixels(), what)
        }

        let srgbICC = [UInt8](try fixture("icc/srgb.icc"))
        let both = try encode(px, width: w, height: h, bits: 8, nclx: (12, 13, 6), icc: srgbICC)
        let iccWins = try ImageDecoder().decode(both)
        XCTAssertEqual(iccWins.iccProfile.map { [UInt8]($0) }, srgbICC)
        XCTAssertFalse(iccWins.isColorConverted)
        assertSame(iccWins.packedPixels(), untagged.packedPixels(), "sRGB ICC with a P3 nclx")
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
