import CImageCore
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// APNG animations: Pillow's APNG test files (Tests/Fixtures/apng) against the frames
/// `scripts/apng_references.py` composited from Pillow's decodes, and hostile variants.
final class APNGDecodeTests: XCTestCase {
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/apng")

    private struct Reference: Decodable {
        var frames: [String]?
        var delays_ms: [Int]?
        var loop_count: Int?
        var still: String?
        var pillow_error: String?
    }

    private struct References: Decodable {
        var files: [String: Reference]
    }

    private func references() throws -> [String: Reference] {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent("references.json"))
        return try JSONDecoder().decode(References.self, from: data).files
    }

    private func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(name)))
    }

    private let allFrames = DecodeOptions(firstFrameOnly: false)

    private func sha256(_ image: Image, frame: Int) -> String {
        let pixels = image.packedPixels(frame: frame)
        var ctx = ic_sha256()
        ic_sha256_init(&ctx)
        pixels.withUnsafeBytes { ic_sha256_update(&ctx, $0.baseAddress!, $0.count) }
        var digest = [UInt8](repeating: 0, count: 32)
        ic_sha256_final(&ctx, &digest)
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// The decode error's code and message, or a failure when the decode succeeds.
    private func failure(_ bytes: [UInt8], _ options: DecodeOptions? = nil,
                         file: StaticString = #filePath, line: UInt = #line) -> (ImageKitError.Code, String)? {
        do {
            _ = try ImageDecoder(options: options ?? allFrames).decode(bytes)
            XCTFail("decoded, but should fail", file: file, line: line)
            return nil
        } catch {
            return (error.code, error.message)
        }
    }

    // MARK: - Against the references

    func testEveryFrameMatchesTheReference() throws {
        var animations = 0
        for (name, reference) in try references().sorted(by: { $0.key < $1.key }) {
            guard let frames = reference.frames else { continue }
            animations += 1
            let bytes = try fixture(name)
            let image = try ImageDecoder(options: allFrames).decode(bytes)
            let info = try ImageDecoder.info(bytes)
            XCTAssertEqual(image.frameCount, frames.count, name)
            XCTAssertEqual(image.width, info.width, name)
            XCTAssertEqual(image.height, info.height, name)
            XCTAssertEqual(image.loopCount, reference.loop_count, name)
            if frames.count > 1 { XCTAssertEqual(image.frameDelays, reference.delays_ms, name) }
            for f in 0..<min(frames.count, image.frameCount) {
                XCTAssertEqual(sha256(image, frame: f), frames[f], "\(name) frame \(f)")
            }
            XCTAssertEqual(info.frameCount, frames.count, name)
            XCTAssertEqual(info.format, .png, name)
        }
        XCTAssertEqual(animations, 37)
    }

    /// Files that are not valid APNGs but valid PNGs (acTL after the IDAT, two acTLs, 0 frames
    /// with an IDAT, no acTL) decode as their IDAT image, even with all frames asked for.
    func testInvalidAnimationsDecodeAsStills() throws {
        var stills = 0
        for (name, reference) in try references() {
            guard let still = reference.still else { continue }
            stills += 1
            let bytes = try fixture(name)
            for options in [allFrames, DecodeOptions()] {
                let image = try ImageDecoder(options: options).decode(bytes)
                XCTAssertEqual(image.frameCount, 1, name)
                XCTAssertEqual(sha256(image, frame: 0), still, name)
            }
            XCTAssertEqual(try ImageDecoder.info(bytes).frameCount, 1, name)
        }
        XCTAssertEqual(stills, 5)
    }

    /// The default decode is the IDAT image: frame 0 of the animation when an fcTL
    /// precedes the IDAT, the fallback image (not part of the animation) otherwise.
    func testTheDefaultDecodeIsTheIDATImage() throws {
        let partOfAnimation = try fixture("dispose_op_none.png")
        let first = try ImageDecoder().decode(partOfAnimation)
        XCTAssertEqual(first.frameCount, 1)
        XCTAssertEqual(first.packedPixels(), try ImageDecoder(options: allFrames).decode(partOfAnimation).packedPixels(frame: 0))

        let fallback = try fixture("single_frame_default.png")
        let still = try ImageDecoder().decode(fallback)
        XCTAssertEqual(Array(still.packedPixels()[0..<4]), [255, 0, 0, 255], "the IDAT image is red")
        let animation = try ImageDecoder(options: allFrames).decode(fallback)
        XCTAssertEqual(animation.frameCount, 1, "the IDAT image is not a frame")
        XCTAssertEqual(Array(animation.packedPixels(frame: 0)[0..<4]), [0, 255, 0, 255], "the fcTL frame is green")
    }

    func testSpecificationPixels() throws {
        // Pixels the test files' descriptions state, at (0,0) and (64,32) of the last frame.
        let expected: [(String, [UInt8], [UInt8])] = [
            ("dispose_op_background.png", [0, 0, 0, 0], [0, 0, 0, 0]),
            ("dispose_op_background_region.png", [0, 0, 255, 255], [0, 0, 0, 0]),
            ("dispose_op_previous.png", [0, 255, 0, 255], [0, 255, 0, 255]),
            ("dispose_op_previous_first.png", [0, 0, 0, 0], [0, 0, 0, 0]),
            ("blend_op_source_transparent.png", [0, 0, 0, 0], [0, 0, 0, 0]),
            ("blend_op_over.png", [0, 255, 0, 255], [0, 255, 0, 255]),
            // Over an opaque black canvas a half-transparent blue frame stays opaque.
            ("mode_16bit.png", [0, 0, 128, 255], [0, 0, 128, 255]),
        ]
        for (name, at0, at64) in expected {
            let image = try ImageDecoder(options: allFrames).decode(fixture(name))
            let px = image.packedPixels(frame: image.frameCount - 1)
            XCTAssertEqual(Array(px[0..<4]), at0, name)
            let i = (32 * 128 + 64) * 4
            XCTAssertEqual(Array(px[i..<(i + 4)]), at64, name)
        }
    }

    func testThumbnailOfEveryFrame() throws {
        let options = DecodeOptions(firstFrameOnly: false, thumbnailPixelSize: PixelSize(square: 32))
        let image = try ImageDecoder(options: options).decode(fixture("dispose_op_background_region.png"))
        XCTAssertEqual(image.frameCount, 3)
        XCTAssertEqual(image.width, 32)
        XCTAssertEqual(image.height, 16)
        let last = image.packedPixels(frame: 2)
        XCTAssertEqual(Array(last[0..<4]), [0, 0, 255, 255])
        XCTAssertEqual(Array(last[(8 * 32 + 16) * 4..<((8 * 32 + 16) * 4 + 4)]), [0, 0, 0, 0])
    }

    /// Adam7-interlaced frames (the test files have none), written by the tests' own PNG
    /// writer: a 20x12 frame 0 that is the IDAT image, then a 7x5 frame at (9, 4) blended
    /// over it whose alpha is 0 or 255, so the expected canvas is a plain selection.
    func testInterlacedFramesAndTheirRegion() throws {
        let base = Pixels.pattern(width: 20, height: 12, alpha: true, seed: 5)
        var patch = Pixels.pattern(width: 7, height: 5, seed: 9)
        for i in stride(from: 3, to: patch.count, by: 8) { patch[i] = 0 } // every other pixel transparent
        let fcTL0 = be32(0) + be32(20) + be32(12) + be32(0) + be32(0) + be16(1) + be16(10) + [0, 0]
        let fcTL1 = be32(1) + be32(7) + be32(5) + be32(9) + be32(4) + be16(3) + be16(0) + [1, 1]
        let patchData = PNGWriter(width: 7, height: 5, colorType: .rgba, bitDepth: 8, samples: patch.map(UInt16.init),
                                  interlaced: true).rawData()
        let apng = PNGWriter(width: 20, height: 12, colorType: .rgba, bitDepth: 8, samples: base.map(UInt16.init),
                             interlaced: true,
                             chunksBeforeData: [("acTL", be32(2) + be32(7)), ("fcTL", fcTL0)],
                             chunksAfterData: [("fcTL", fcTL1), ("fdAT", be32(2) + PNGWriter.zlibStored(patchData))]).encode()

        var expected = base
        for y in 0..<5 {
            for x in 0..<7 where patch[(y * 7 + x) * 4 + 3] == 255 {
                let from = (y * 7 + x) * 4, to = ((4 + y) * 20 + 9 + x) * 4
                expected.replaceSubrange(to..<(to + 4), with: patch[from..<(from + 4)])
            }
        }
        let image = try ImageDecoder(options: allFrames).decode(apng)
        XCTAssertEqual(image.frameCount, 2)
        XCTAssertEqual(image.loopCount, 7)
        XCTAssertEqual(image.frameDelays, [100, 30])
        XCTAssertEqual(image.packedPixels(frame: 0), Pixels.premultiplied(base))
        XCTAssertEqual(image.packedPixels(frame: 1), Pixels.premultiplied(expected))
        XCTAssertEqual(try ImageDecoder().decode(apng).packedPixels(), Pixels.premultiplied(base))
    }

    // MARK: - Invalid and hostile files

    func testInvalidAnimationsFailNamingTheProblem() throws {
        let expected: [String: (ImageKitError.Code, String)] = [
            "chunk_no_fctl.png": (.corrupt, "APNG: fdAT chunk before any fcTL"),
            "chunk_no_fdat.png": (.corrupt, "APNG: frame 0 has no image data"),
            "chunk_repeat_fctl.png": (.corrupt, "APNG: sequence number 0 in the fcTL chunk at byte 295, expected 1"),
            "sequence_fdat_fctl.png": (.corrupt, "APNG: sequence number 0 in the fdAT chunk"),
            "sequence_gap.png": (.corrupt, "APNG: sequence number 4 in the fdAT chunk at byte 496, expected 3"),
            "sequence_reorder.png": (.corrupt, "APNG: sequence number 4"),
            "sequence_reorder_chunk.png": (.corrupt, "APNG: sequence number 4"),
            "sequence_repeat.png": (.corrupt, "APNG: sequence number 2"),
            "sequence_repeat_chunk.png": (.corrupt, "APNG: sequence number 3"),
            "sequence_start.png": (.corrupt, "APNG: sequence number 1 in the fcTL chunk at byte 257, expected 0"),
            "syntax_num_frames_high.png": (.corrupt, "APNG: the acTL announces 3 frames, the file has 2"),
            "syntax_num_frames_zero.png": (.corrupt, "PNG: "),
        ]
        var refused = 0
        for (name, reference) in try references() where reference.pillow_error != nil {
            refused += 1
            guard let (code, prefix) = expected[name] else {
                XCTFail("\(name): Pillow refuses it, no expectation here")
                continue
            }
            guard let (got, message) = failure(try fixture(name)) else { continue }
            XCTAssertEqual(got, code, name)
            XCTAssertTrue(message.hasPrefix(prefix), "\(name): \(message)")
        }
        XCTAssertEqual(refused, expected.count)
    }

    /// Chunks of a PNG (type and data), to take apart and put together with fresh CRCs.
    private func chunks(_ png: [UInt8]) -> [(String, [UInt8])] { PNGChunks.parse(png).map { ($0.type, $0.data) } }

    private func assemble(_ chunks: [(String, [UInt8])]) -> [UInt8] {
        chunks.reduce([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { $0 + PNGWriter.chunk($1.0, $1.1) }
    }

    /// dispose_op_none.png with the `index`-th fcTL's data changed by `change`.
    private func withFrameControl(_ index: Int, _ change: (inout [UInt8]) -> Void) throws -> [UInt8] {
        var parts = chunks(try fixture("dispose_op_none.png"))
        let at = parts.indices.filter { parts[$0].0 == "fcTL" }[index]
        change(&parts[at].1)
        return assemble(parts)
    }

    func testFrameOutsideTheCanvasFails() throws {
        // Frame 1 of dispose_op_none.png is 128x64 at (0,0); move it to x = 1.
        let moved = try withFrameControl(1) { $0.replaceSubrange(12..<16, with: be32(1)) }
        let (code, message) = try XCTUnwrap(failure(moved))
        XCTAssertEqual(code, .corrupt)
        XCTAssertTrue(message.hasPrefix("APNG: frame 1 of 128x64 at (1, 0) is not inside the 128x64 canvas"), message)

        // An offset near 2^32 must not wrap around.
        let wrapped = try withFrameControl(2) {
            $0.replaceSubrange(4..<8, with: be32(16))
            $0.replaceSubrange(12..<16, with: be32(0xFFFF_FFF8))
        }
        XCTAssertTrue(try XCTUnwrap(failure(wrapped)).1.contains("is not inside the 128x64 canvas"))
    }

    func testZeroSizeFrameFails() throws {
        let empty = try withFrameControl(2) { $0.replaceSubrange(8..<12, with: be32(0)) }
        let (code, message) = try XCTUnwrap(failure(empty))
        XCTAssertEqual(code, .corrupt)
        XCTAssertTrue(message.hasPrefix("APNG: frame 2 of 128x0 at (0, 0) is not inside"), message)
    }

    func testHugeFrameCountIsRefusedByTheLimitBeforeAnyScan() throws {
        var parts = chunks(try fixture("dispose_op_none.png"))
        let actl = try XCTUnwrap(parts.firstIndex { $0.0 == "acTL" })
        parts[actl].1.replaceSubrange(0..<4, with: be32(0x8000_0000))
        let (code, message) = try XCTUnwrap(failure(assemble(parts)))
        XCTAssertEqual(code, .limitExceeded)
        XCTAssertEqual(message, "PNG: animation has 2147483648 frames, over the limit of 1000")
        XCTAssertEqual(try ImageDecoder.info(assemble(parts)).frameCount, 0x8000_0000)

        // Without a frame limit the output the acTL announces is over the memory limit.
        let limits = DecodeLimits(maxFrames: 0)
        let (unlimited, text) = try XCTUnwrap(failure(assemble(parts), DecodeOptions(limits: limits, firstFrameOnly: false)))
        XCTAssertEqual(unlimited, .limitExceeded)
        XCTAssertTrue(text.contains("2147483648 frame(s)") && text.contains("memory limit"), text)
    }

    func testFrameAndMemoryLimits() throws {
        let bytes = try fixture("blend_op_over_near_transparent.png") // 128 frames of 128x64
        let few = DecodeOptions(limits: DecodeLimits(maxFrames: 100), firstFrameOnly: false)
        let (code, message) = try XCTUnwrap(failure(bytes, few))
        XCTAssertEqual(code, .limitExceeded)
        XCTAssertTrue(message.contains("128 frames, over the limit of 100"), message)

        let small = DecodeOptions(limits: DecodeLimits(maxMemoryBytes: 2 << 20), firstFrameOnly: false)
        let (memory, text) = try XCTUnwrap(failure(bytes, small))
        XCTAssertEqual(memory, .limitExceeded)
        XCTAssertTrue(text.contains("memory limit"), text)
        // The first frame alone fits.
        XCTAssertEqual(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxMemoryBytes: 2 << 20))).decode(bytes).frameCount, 1)
    }

    func testTruncatedFrameDataFails() throws {
        let bytes = try fixture("dispose_op_none.png")
        let parts = chunks(bytes)
        // Cut inside the last fdAT chunk.
        var offset = 8
        var lastFdAT = 0
        for (type, data) in parts {
            if type == "fdAT" { lastFdAT = offset }
            offset += 12 + data.count
        }
        let cut = Array(bytes[0..<(lastFdAT + 20)])
        let (code, message) = try XCTUnwrap(failure(cut))
        XCTAssertEqual(code, .truncated)
        XCTAssertEqual(message, "APNG: truncated after \(cut.count) bytes, inside the fdAT chunk at byte \(lastFdAT)")
        // The first frame (the IDAT) is still there for the default decode.
        XCTAssertEqual(try ImageDecoder().decode(cut).frameCount, 1)

        // Cut before the last frame's fcTL: frames are missing.
        let lastFcTL = parts.indices.filter { parts[$0].0 == "fcTL" }.last!
        let short = Array(bytes[0..<(8 + parts[..<lastFcTL].reduce(0) { $0 + 12 + $1.1.count })])
        let (shortCode, shortMessage) = try XCTUnwrap(failure(short))
        XCTAssertEqual(shortCode, .truncated)
        XCTAssertTrue(shortMessage.contains("with 2 of the 3 frames the acTL announces"), shortMessage)
    }

    func testBadFrameDataCRCFails() throws {
        var bytes = try fixture("dispose_op_none.png")
        let parts = chunks(bytes)
        var offset = 8
        for (type, data) in parts {
            if type == "fdAT" { break }
            offset += 12 + data.count
        }
        bytes[offset + 12] ^= 0x01 // a byte of the first fdAT's compressed data
        let (code, message) = try XCTUnwrap(failure(bytes))
        XCTAssertEqual(code, .corrupt)
        XCTAssertEqual(message, "APNG: CRC mismatch in the fdAT chunk (chunk at byte \(offset))")

        // The IHDR every frame is re-wrapped with: checked as libpng checks it for the still.
        var header = try fixture("dispose_op_none.png")
        header[29] ^= 0x01
        XCTAssertEqual(try XCTUnwrap(failure(header)).1, "APNG: CRC mismatch in the IHDR chunk (chunk at byte 8)")
        XCTAssertEqual(try XCTUnwrap(failure(header, DecodeOptions())).0, .corrupt)
    }

    func testBadFrameDataNamesTheFrame() throws {
        // Frame 1's zlib data replaced by stored blocks of too few bytes: libpng's error, with the frame.
        var parts = chunks(try fixture("dispose_op_none.png"))
        let fdat = try XCTUnwrap(parts.firstIndex { $0.0 == "fdAT" })
        parts[fdat].1 = Array(parts[fdat].1[0..<4]) + PNGWriter.zlibStored([0, 1, 2, 3])
        let (code, message) = try XCTUnwrap(failure(assemble(parts)))
        XCTAssertEqual(code, .corrupt)
        XCTAssertTrue(message.hasPrefix("PNG: ") && message.hasSuffix("(APNG frame 1)"), message)
    }

    // MARK: - Through the C core

    /// Decodes every frame through the C core with the cancel flag at `flag`: status, message, peak bytes.
    private func decodeInC(_ data: [UInt8], cancelFlag flag: Int32 = 0) -> (ic_status, String, UInt64) {
        var cancel = flag
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.all_frames = 1
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        var stats = ic_decode_stats()
        let st = withUnsafePointer(to: &cancel) { flag in
            options.cancel_flag = flag
            return ic_decode(data, data.count, &options, &out, &stats, &err)
        }
        ic_image_free(out)
        XCTAssertEqual(st == IC_OK, out != nil)
        return (st, cString(err.message), stats.peak_bytes)
    }

    func testTheCancelFlagStopsTheAnimation() throws {
        let (st, message, _) = decodeInC(try fixture("blend_op_over_near_transparent.png"), cancelFlag: 1)
        XCTAssertEqual(st, IC_ERR_CANCELLED)
        XCTAssertEqual(message, "PNG: decode cancelled")
    }

    /// The canvas, the frame and the saved canvas (dispose to previous) are counted, and
    /// nothing else of note is held: the peak is the output plus those and libpng's inflater.
    func testPeakMemoryIsTheOutputPlusTheCompositingBuffers() throws {
        let (st, _, peak) = decodeInC(try fixture("dispose_op_previous.png")) // 3 frames of 128x64
        XCTAssertEqual(st, IC_OK)
        let frame = UInt64(128 * 64 * 4)
        XCTAssertGreaterThanOrEqual(peak, 3 * frame + 3 * frame, "output, canvas, frame and saved canvas")
        XCTAssertLessThan(peak, 6 * frame + (64 << 10), "no more than libpng's inflater on top")
    }

    /// An eXIf orientation turns every frame of an APNG, as it turns a still PNG.
    func testEveryFrameFollowsTheExifOrientation() throws {
        var parts = chunks(try fixture("dispose_op_none.png"))
        // II, 42, IFD at 8: one entry, Orientation (0x0112) SHORT 1 = 6 (a quarter turn clockwise).
        let exif: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        parts.insert(("eXIf", exif), at: 1)
        let file = assemble(parts)
        XCTAssertEqual(try ImageDecoder.info(file).orientation, 6)

        let stored = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false, applyOrientation: false)).decode(file)
        let turned = try ImageDecoder(options: allFrames).decode(file)
        XCTAssertGreaterThan(stored.frameCount, 1)
        XCTAssertEqual(turned.frameCount, stored.frameCount)
        XCTAssertEqual(turned.width, stored.height)
        XCTAssertEqual(turned.height, stored.width)
        for f in 0..<stored.frameCount {
            let expected = Pixels.oriented(stored.packedPixels(frame: f), width: stored.width, height: stored.height,
                                           orientation: 6)
            XCTAssertTrue(turned.packedPixels(frame: f) == expected.pixels, "frame \(f)")
        }
    }

    /// An iCCP profile converts every frame of an APNG to sRGB, as it converts a still's pixels.
    func testEveryFrameIsConvertedByTheICCProfile() throws {
        let p3 = [UInt8](try Data(contentsOf: Self.directory.deletingLastPathComponent()
            .appendingPathComponent("color/p3.png")))
        let iccp = try XCTUnwrap(chunks(p3).first { $0.0 == "iCCP" })
        let w = 16, h = 8
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func frameControl(_ seq: Int) -> (String, [UInt8]) {
            ("fcTL", be(seq, 4) + be(w, 4) + be(h, 4) + be(0, 4) + be(0, 4) + be(1, 2) + be(10, 2) + [0, 0])
        }
        // Two opaque frames of many colours, each a still PNG of its own with the profile too.
        let stills = (0..<2).map { seed -> [UInt8] in
            let rgb = Pixels.pattern(width: w, height: h, seed: seed * 77).enumerated()
                .filter { $0.offset % 4 != 3 }.map { UInt16($0.element) }
            var writer = PNGWriter(width: w, height: h, colorType: .rgb, bitDepth: 8, samples: rgb)
            writer.chunksBeforeData = [iccp]
            return writer.encode()
        }
        let first = chunks(stills[0]), second = chunks(stills[1])
        var parts = [first[0], iccp, ("acTL", be(2, 4) + be(0, 4)), frameControl(0)]
        parts += first.filter { $0.0 == "IDAT" }
        parts.append(frameControl(1))
        parts += second.filter { $0.0 == "IDAT" }.enumerated().map { ("fdAT", be(2 + $0.offset, 4) + $0.element.1) }
        parts.append(("IEND", []))
        let file = assemble(parts)

        let raw = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false, colorMode: .raw)).decode(file)
        let converted = try ImageDecoder(options: allFrames).decode(file)
        XCTAssertTrue(converted.isColorConverted)
        XCTAssertEqual(converted.frameCount, 2)
        for f in 0..<2 {
            let still = try ImageDecoder().decode(stills[f])
            XCTAssertTrue(still.isColorConverted)
            XCTAssertTrue(converted.packedPixels(frame: f) == still.packedPixels(), "frame \(f)")
            XCTAssertFalse(converted.packedPixels(frame: f) == raw.packedPixels(frame: f), "frame \(f) is converted")
        }
    }
}
