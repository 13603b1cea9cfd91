import CImageCore
import Foundation
import Glibc
import ImageKit
import ImageKitTestSupport
import XCTest

/// AVIF: libavif's test files against avifdec's references (Tests/Fixtures/avif, made by
/// scripts/make_avif_fixtures.py), sniffing, the container read without decoding, transforms,
/// sequences, thumbnails, cancellation, hostile files and the encoder.
final class AVIFDecodeTests: XCTestCase {
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/avif")

    private func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Self.directory.appendingPathComponent(name))
    }

    private func decode(_ data: Data, _ options: DecodeOptions = DecodeOptions()) throws -> Image {
        try ImageDecoder(options: options).decode(data)
    }

    /// SHA-256 of frame `frame`'s premultiplied pixels, rows tightly packed.
    private func sha256(_ image: Image, frame: Int) -> String {
        var ctx = ic_sha256()
        ic_sha256_init(&ctx)
        let pixels = image.packedPixels(frame: frame)
        pixels.withUnsafeBytes { ic_sha256_update(&ctx, $0.baseAddress, $0.count) }
        var digest = [UInt8](repeating: 0, count: 32)
        ic_sha256_final(&ctx, &digest)
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// The error `body` throws, failing the test when it throws none or not an ImageKitError.
    private func error(_ body: () throws -> Void, _ what: String) -> ImageKitError? {
        do {
            try body()
            XCTFail("\(what): no error")
        } catch let e as ImageKitError {
            return e
        } catch {
            XCTFail("\(what): \(error)")
        }
        return nil
    }

    func testFilesMatchAvifdecReferences() throws {
        let list = try JSONSerialization.jsonObject(with: try fixture("references.json")) as! [[String: Any]]
        XCTAssertGreaterThanOrEqual(list.count, 10)
        for entry in list {
            let file = entry["file"] as! String
            let image = try decode(try fixture(file), DecodeOptions(firstFrameOnly: false))
            XCTAssertEqual(image.sourceFormat, .avif, file)
            XCTAssertEqual(image.width, entry["width"] as? Int, file)
            XCTAssertEqual(image.height, entry["height"] as? Int, file)
            XCTAssertEqual(image.frameCount, entry["frames"] as? Int, file)
            if entry["match"] as? String == "exact" {
                let hashes = entry["sha256"] as! [String]
                for (frame, hash) in hashes.enumerated() {
                    XCTAssertEqual(sha256(image, frame: frame), hash, "\(file) frame \(frame)")
                }
            } else {
                let reference = try decode(try fixture(entry["reference"] as! String))
                let psnr = Quality.psnr(image, reference)
                XCTAssertGreaterThanOrEqual(psnr, entry["min_psnr"] as! Double, "\(file): \(psnr) dB")
            }
        }
    }

    func testSniffingTellsAVIFFromHEIF() {
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let body = Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
            return [0, 0, 0, UInt8(8 + body.count)] + Array("ftyp".utf8) + body
        }
        let cases: [([UInt8], ImageFormat)] = [
            (ftyp("avif", ["avif", "mif1", "miaf"]), .avif),
            (ftyp("avis", ["avis", "msf1", "iso8"]), .avif),
            (ftyp("mif1", ["mif1", "avif"]), .avif),
            (ftyp("msf1", ["msf1", "avis"]), .avif),
            (ftyp("heic", ["mif1", "heic"]), .heic),
            (ftyp("mif1", ["mif1", "heic"]), .heic),
            (ftyp("msf1", ["msf1", "hevc"]), .heic),
            (ftyp("mif1", ["mif1", "miaf"]), .heif),
            (ftyp("isom", ["isom", "mp41"]), .unknown),
        ]
        for (bytes, format) in cases {
            XCTAssertEqual(ImageFormat(detecting: bytes), format, String(decoding: bytes[8..<12], as: UTF8.self))
        }
        XCTAssertTrue(ImageFormat.avif.isDecodable)
        XCTAssertTrue(BuiltInImageCoder().canEncode(.avif))
    }

    func testInfoReadsTheContainerOnly() throws {
        let still = try ImageDecoder.info(try fixture("cosmos1650_yuv444_10bpc_p3pq.avif"))
        XCTAssertEqual(still.format, .avif)
        XCTAssertEqual([still.width, still.height, still.frameCount, still.bitDepth], [1024, 428, 1, 10])
        XCTAssertFalse(still.hasAlpha)
        XCTAssertNil(still.iccProfileSpace)
        let sequence = try ImageDecoder.info(try fixture("colors-animated-12bpc-keyframes-0-2-3.avif"))
        XCTAssertEqual([sequence.frameCount, sequence.bitDepth], [5, 12])
        XCTAssertTrue(sequence.hasAlpha)
        let rotated = try ImageDecoder.info(try fixture("abc_color_irot_alpha_irot.avif"))
        XCTAssertEqual([rotated.width, rotated.height, rotated.orientation], [512, 256, 8])
        XCTAssertEqual(try ImageDecoder.info(try fixture("clap_irot_imir_non_essential.avif")).orientation, 7)
        let tagged = try ImageDecoder.info(try fixture("paris_icc_exif_xmp.avif"))
        XCTAssertEqual(tagged.iccProfileSpace, .rgb)
        XCTAssertEqual(tagged.iccProfileSize, 596)
    }

    func testIrotAndImirAreAppliedUnlessKept() throws {
        // irot 1 (a quarter turn anticlockwise) is EXIF orientation 8.
        let data = try fixture("abc_color_irot_alpha_irot.avif")
        let upright = try decode(data)
        XCTAssertEqual([upright.width, upright.height, upright.orientation], [256, 512, 8])
        XCTAssertTrue(upright.isOrientationApplied)
        XCTAssertFalse(upright.isOpaque)
        let stored = try decode(data, DecodeOptions(applyOrientation: false))
        XCTAssertEqual([stored.width, stored.height], [512, 256])
        XCTAssertFalse(stored.isOrientationApplied)
        XCTAssertEqual(upright.packedPixels(), Pixels.oriented(stored.packedPixels(), width: 512, height: 256, orientation: 8).pixels)
        // A thumbnail box is for the upright picture.
        let thumbnail = try decode(data, DecodeOptions(thumbnailPixelSize: PixelSize(width: 64, height: 128)))
        XCTAssertEqual([thumbnail.width, thumbnail.height], [64, 128])
    }

    func testSequencesHaveDelaysAndPlayForever() throws {
        let data = try fixture("colors-animated-8bpc.avif")
        let all = try decode(data, DecodeOptions(firstFrameOnly: false))
        XCTAssertEqual(all.frameCount, 5)
        XCTAssertEqual(all.frameDelays, [33, 33, 33, 33, 33])  // 1/30 s each
        XCTAssertEqual(all.loopCount, 0)
        let first = try decode(data)
        XCTAssertEqual(first.frameCount, 1)
        XCTAssertEqual(first.packedPixels(), all.packedPixels(frame: 0))
        let slow = try decode(try fixture("colors-animated-12bpc-keyframes-0-2-3.avif"), DecodeOptions(firstFrameOnly: false))
        XCTAssertEqual(slow.frameDelays, [1000, 1000, 1000, 1000, 1000])
        let thumbnails = try decode(data, DecodeOptions(firstFrameOnly: false, thumbnailPixelSize: PixelSize(square: 40)))
        XCTAssertEqual([thumbnails.frameCount, thumbnails.width, thumbnails.height], [5, 40, 40])
    }

    func testThumbnailsAverageTheYUVPlanesThenResample() throws {
        let data = try fixture("kodim03_yuv420_8bpc.avif")
        var statistics = DecodeStatistics()
        let thumbnail = try data.withUnsafeBytes {
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 192)))
                .decode($0, statistics: &statistics)
        }
        XCTAssertEqual([thumbnail.width, thumbnail.height], [192, 128])
        // The AV1 decode is full size; its YUV planes are box-averaged 2x (to twice the output).
        XCTAssertEqual(statistics.codecSize, PixelSize(width: 384, height: 256))
        var fullStatistics = DecodeStatistics()
        let full = try data.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &fullStatistics) }
        let resized = try ImageResizer(size: PixelSize(width: 192, height: 128), mode: .stretch).resize(full)
        let psnr = Quality.psnr(thumbnail, resized)
        XCTAssertGreaterThanOrEqual(psnr, 35, "thumbnail against the resized full decode: \(psnr) dB")
        // The full-size RGBA bitmap (1.5 MiB) is never held (the codec's planes count in both).
        XCTAssertLessThan(statistics.peakBytes + 768 * 512 * 4 / 2, fullStatistics.peakBytes)
        // With alpha, the picture is converted at full size (alpha premultiplied before averaging).
        var alphaStatistics = DecodeStatistics()
        let transparent = try fixture("abc_color_irot_alpha_irot.avif")
        _ = try transparent.withUnsafeBytes {
            try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 64))).decode($0, statistics: &alphaStatistics)
        }
        XCTAssertEqual(alphaStatistics.codecSize, PixelSize(width: 512, height: 256))
    }

    func testCancelledDecodeStops() throws {
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        XCTAssertThrowsError(try BuiltInImageCoder().decode(try fixture("kodim03_yuv420_8bpc.avif"), options: DecodeOptions(),
                                                            cancellation: cancellation)) {
            XCTAssertEqual(($0 as? ImageKitError)?.code, .cancelled)
        }
    }

    func testTruncatedFilesFailCleanly() throws {
        for name in ["kodim03_yuv420_8bpc.avif", "colors-animated-8bpc.avif", "abc_color_irot_alpha_irot.avif"] {
            let data = try fixture(name)
            for cut in [12, 40, 200, data.count / 3, data.count / 2, data.count - 10] {
                let e = error({ _ = try decode(data.prefix(cut), DecodeOptions(firstFrameOnly: false)) }, "\(name) cut at \(cut)")
                XCTAssertTrue([.truncated, .corrupt].contains(e?.code), "\(name) cut at \(cut): \(String(describing: e))")
                XCTAssertTrue(e?.message.hasPrefix("AVIF: ") ?? false, "\(String(describing: e))")
            }
        }
    }

    func testGarbageAfterTheFileTypeBoxFailsCleanly() throws {
        let data = try fixture("kodim03_yuv420_8bpc.avif")
        let ftypSize = Int(data[3])
        var generator = SystemRandomNumberGenerator()
        for length in [0, 8, 100, 4000] {
            let garbage = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let e = error({ _ = try decode(data.prefix(ftypSize) + garbage) }, "\(length) bytes of garbage")
            XCTAssertTrue([.truncated, .corrupt].contains(e?.code), "\(String(describing: e))")
            XCTAssertTrue(e?.message.hasPrefix("AVIF: ") ?? false, "\(String(describing: e))")
        }
    }

    /// `data` with its first 'ispe' box claiming `width` x `height`.
    private func claimingSize(_ data: Data, _ width: UInt32, _ height: UInt32) throws -> Data {
        var bytes = [UInt8](data)
        let ispe = try XCTUnwrap((0..<bytes.count - 4).first { bytes[$0..<$0 + 4].elementsEqual("ispe".utf8) })
        for (i, v) in [width, height].enumerated() {
            for b in 0..<4 { bytes[ispe + 8 + 4 * i + b] = UInt8(truncatingIfNeeded: v >> (24 - 8 * b)) }
        }
        return Data(bytes)
    }

    func testSizeBombIsRefusedBeforeDecoding() throws {
        let kodim = try fixture("kodim03_yuv420_8bpc.avif")
        // Past libavif's own bounds (32768 a side, 2^28 pixels): refused while parsing the container.
        let huge = try claimingSize(kodim, 60000, 60000)
        XCTAssertEqual(error({ _ = try ImageDecoder.info(huge) }, "info 60000x60000")?.code, .limitExceeded)
        XCTAssertEqual(error({ _ = try decode(huge) }, "60000x60000")?.code, .limitExceeded)
        // Within them, ImageKit's pixel limit refuses it (libavif's imageSizeLimit is set from it).
        let bomb = try claimingSize(kodim, 16000, 16000)
        XCTAssertEqual(try ImageDecoder.info(bomb).width, 16000)
        let e = error({ _ = try decode(bomb) }, "16000x16000")
        XCTAssertEqual(e?.code, .limitExceeded, "\(String(describing: e))")
        XCTAssertTrue(e?.message.contains("16000x16000") ?? false, "\(String(describing: e))")
        // Past the pixel limit, the memory limit refuses it: checked from the container, before
        // the AV1 decode or any pixel allocation, in a process that cannot map 128 MiB more.
        if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil {
            throw XCTSkip("address-space caps do not work under a sanitizer")
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("avif-bomb-\(getpid()).avif")
        try bomb.write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let imagekit = BuiltProducts.imagekit.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v \((96 + 128) << 10) && exec \"$0\" decode --max-pixels 4000000000 \"$1\"",
                             imagekit, path.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = Pipe()
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1, output)
        XCTAssertTrue(output.contains("memory limit"), output)
    }

    func testFrameCountOverTheLimitIsRefused() throws {
        let data = try fixture("colors-animated-8bpc.avif")
        let limits = DecodeLimits(maxFrames: 3)
        let e = error({ _ = try decode(data, DecodeOptions(limits: limits, firstFrameOnly: false)) }, "5 frames, limit 3")
        XCTAssertEqual(e?.code, .limitExceeded, "\(String(describing: e))")
        XCTAssertEqual(try decode(data, DecodeOptions(limits: limits)).frameCount, 1)
    }

    func testDisplayP3WithoutAProfileIsConverted() throws {
        let cicp = try decode(try fixture("kodim23_p3_cicp.avif"))
        XCTAssertTrue(cicp.isColorConverted)
        XCTAssertEqual(cicp.iccProfileSpace, .rgb)  // the profile ImageKit built
        let raw = try decode(try fixture("kodim23_p3_cicp.avif"), DecodeOptions(colorMode: .raw))
        XCTAssertFalse(raw.isColorConverted)
        XCTAssertNotEqual(raw.packedPixels(), cicp.packedPixels())
        let icc = try decode(try fixture("kodim23_p3_icc.avif"))
        XCTAssertTrue(icc.isColorConverted)
        XCTAssertEqual(icc.iccProfileSpace, .rgb)
        // An sRGB profile changes nothing; HDR (PQ) and other primaries are left as they are.
        XCTAssertFalse(try decode(try fixture("paris_icc_exif_xmp.avif")).isColorConverted)
        XCTAssertFalse(try decode(try fixture("cosmos1650_yuv444_10bpc_p3pq.avif")).isColorConverted)
    }

    func testEncoderRoundTripsWithQualityAndAlpha() throws {
        let opaque = try decode(try fixture("kodim03_yuv420_8bpc.avif"))
        var sizes: [Int] = []
        for quality in [30, 60, 90] {
            let data = try ImageEncoder.encode(opaque, as: .avif(quality: quality, speed: 9))
            XCTAssertEqual(ImageFormat(detecting: data), .avif)
            let back = try decode(data)
            XCTAssertTrue(back.isOpaque)
            XCTAssertEqual(try ImageDecoder.info(data).hasAlpha, false)
            XCTAssertGreaterThanOrEqual(Quality.psnr(opaque, back), quality == 90 ? 42 : 30, "quality \(quality)")
            sizes.append(data.count)
        }
        XCTAssertLessThan(sizes[0], sizes[1])
        XCTAssertLessThan(sizes[1], sizes[2])
        let full = try ImageEncoder.encode(opaque, as: .avif(quality: 60, speed: 9, yuv444: true))
        XCTAssertGreaterThan(Quality.psnr(opaque, try decode(full)), Quality.psnr(opaque, try decode(
            try ImageEncoder.encode(opaque, as: .avif(quality: 60, speed: 9)))))

        let transparent = try decode(try fixture("abc_color_irot_alpha_irot.avif"))
        let data = try ImageEncoder.encode(transparent, as: .avif(quality: 90, speed: 9))
        XCTAssertTrue(try ImageDecoder.info(data).hasAlpha)
        let back = try decode(data)
        XCTAssertFalse(back.isOpaque)
        XCTAssertGreaterThanOrEqual(Quality.psnr(transparent, back), 35)
    }

    func testEncoderSettingsAndProfile() throws {
        let image = try decode(try fixture("colors_sdr_srgb.avif"))
        for format in [EncodeFormat.avif(quality: 101), .avif(quality: -1), .avif(speed: 11), .avif(speed: -1)] {
            XCTAssertEqual(error({ _ = try ImageEncoder.encode(image, as: format) }, "\(format)")?.code, .invalidArgument)
        }
        let profile = try XCTUnwrap(try decode(try fixture("paris_icc_exif_xmp.avif")).iccProfile)
        let tagged = try ImageEncoder.encode(image, as: .avif(speed: 10), iccProfile: profile)
        XCTAssertEqual(try decode(tagged).iccProfile, profile)
        XCTAssertNil(try decode(try ImageEncoder.encode(image, as: .avif(speed: 10))).iccProfile)
        XCTAssertEqual(EncodeFormat(pathExtension: "AVIF"), .avif())
        XCTAssertEqual(EncodeFormat.avif().imageFormat, .avif)
    }
}
