import CAnchors
import CImageCore
import CImageCore.Testing
import Foundation
import XCTest

/// The PNG fast path (libdeflate, our unfiltering and expansion) against libpng: every PNG
/// of the shared corpus and of Tests/Fixtures, generated files of every colour type, bit
/// depth, filter type and interlacing, full decodes and thumbnails, must give the same bytes
/// (or the same error) through both. Hostile inputs fail cleanly through the fast path alone.
final class PNGFastPathTests: XCTestCase {
    /// One decode's outcome, comparable across paths.
    private typealias Outcome = DecodeOutcome

    private func decode(_ bytes: [UInt8], _ path: ic_png_path, thumbnail: UInt32 = 0,
                        maxMemory: UInt64? = nil) -> Outcome {
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.thumbnail_width = thumbnail
        options.thumbnail_height = thumbnail
        if let maxMemory { options.limits.max_memory_bytes = maxMemory }
        var image: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let status = bytes.withUnsafeBufferPointer {
            ic_decode_png_path($0.baseAddress, $0.count, &options, path, &image, nil, &err)
        }
        return Outcome(status: status, image: image, error: err)
    }

    /// Decodes `bytes` through libpng and the automatic choice, full size and as 64 and
    /// 256 px thumbnails, and asserts equal outcomes; returns whether the fast path took
    /// the file.
    @discardableResult
    private func assertPathsAgree(_ bytes: [UInt8], _ name: String,
                                  file: StaticString = #filePath, line: UInt = #line) -> Bool {
        for thumbnail: UInt32 in [0, 64, 256] {
            let reference = decode(bytes, IC_PNG_PATH_LIBPNG, thumbnail: thumbnail)
            let automatic = decode(bytes, IC_PNG_PATH_AUTO, thumbnail: thumbnail)
            XCTAssertEqual(reference.status, automatic.status, "\(name) thumbnail \(thumbnail)", file: file, line: line)
            XCTAssertEqual(reference.message, automatic.message, "\(name) thumbnail \(thumbnail)", file: file, line: line)
            XCTAssertEqual(reference.width, automatic.width, "\(name) thumbnail \(thumbnail)", file: file, line: line)
            XCTAssertEqual(reference.height, automatic.height, "\(name) thumbnail \(thumbnail)", file: file, line: line)
            XCTAssertEqual(reference.opaque, automatic.opaque, "\(name) thumbnail \(thumbnail)", file: file, line: line)
            XCTAssertTrue(reference.pixels == automatic.pixels, "\(name) thumbnail \(thumbnail): pixels differ",
                          file: file, line: line)
        }
        return decode(bytes, IC_PNG_PATH_FAST).status == IC_OK
    }

    private var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    private func pngFiles(under directory: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension.lowercased() == "png" }
            .sorted { $0.path < $1.path }
    }

    func testFixturePNGsDecodeAlikeThroughBothPaths() throws {
        let files = pngFiles(under: root.appendingPathComponent("Tests/Fixtures"))
        XCTAssertGreaterThan(files.count, 20)
        var fast = 0
        for url in files where assertPathsAgree(Array(try Data(contentsOf: url)), url.lastPathComponent) {
            fast += 1
        }
        XCTAssertGreaterThan(fast, files.count / 2, "the fast path should take most fixtures")
    }

    func testCorpusPNGsDecodeAlikeThroughBothPaths() throws {
        let corpus = root.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        guard FileManager.default.fileExists(atPath: corpus.path) else {
            throw XCTSkip("the shared corpus is not beside the project (\(corpus.path))")
        }
        let files = pngFiles(under: corpus)
        XCTAssertGreaterThan(files.count, 100)
        var fast = 0
        for url in files where assertPathsAgree(Array(try Data(contentsOf: url)), url.path) {
            fast += 1
        }
        XCTAssertGreaterThan(fast, files.count / 2, "the fast path should take most corpus files")
    }

    // MARK: Generated files

    private func samples(count: Int, bitDepth: Int, seed: Int) -> [UInt16] {
        var state = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 977)
        let mask = UInt32((1 << bitDepth) - 1)
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            // Runs of equal samples too, so colour keys and flat areas appear.
            return UInt16((state >> 20) % 3 == 0 ? 0 : (state >> 8) & mask)
        }
    }

    /// `png` with its scanlines refiltered, row r with filter type (r + shift) % 5.
    private func refiltered(_ png: PNGWriter, shift: Int) -> [UInt8] {
        let bpp = max(1, png.colorType.channels * png.bitDepth / 8)
        var raw = png.rawData()
        var filtered: [UInt8] = []
        var rowIndex = 0
        var offset = 0
        let passes = png.interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        for (x0, y0, dx, dy) in passes {
            let w = png.width > x0 ? (png.width - x0 + dx - 1) / dx : 0
            let rows = png.height > y0 ? (png.height - y0 + dy - 1) / dy : 0
            if w == 0 || rows == 0 { continue }
            let length = (w * png.colorType.channels * png.bitDepth + 7) / 8
            var previous = [UInt8](repeating: 0, count: length)
            for _ in 0..<rows {
                let row = Array(raw[(offset + 1)..<(offset + 1 + length)])
                let type = (rowIndex + shift) % 5
                filtered.append(UInt8(type))
                for i in 0..<length {
                    let a = i >= bpp ? Int(row[i - bpp]) : 0, b = Int(previous[i])
                    let c = i >= bpp ? Int(previous[i - bpp]) : 0
                    let predictor: Int
                    switch type {
                    case 1: predictor = a
                    case 2: predictor = b
                    case 3: predictor = (a + b) / 2
                    case 4:
                        let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                        predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                    default: predictor = 0
                    }
                    filtered.append(UInt8(truncatingIfNeeded: Int(row[i]) - predictor))
                }
                previous = row
                offset += 1 + length
                rowIndex += 1
            }
        }
        raw = filtered
        var out = Array(png.encode().prefix(8 + 25))
        if png.colorType == .palette { out += PNGWriter.chunk("PLTE", png.palette) }
        if let trns = png.trns { out += PNGWriter.chunk("tRNS", trns) }
        // Two IDAT chunks, so the fast path joins them.
        let stream = PNGWriter.zlibStored(raw)
        let half = stream.count / 2
        out += PNGWriter.chunk("IDAT", Array(stream[..<half])) + PNGWriter.chunk("IDAT", Array(stream[half...]))
        return out + PNGWriter.chunk("IEND", [])
    }

    func testEveryColourTypeDepthFilterAndInterlacingMatchesLibpng() {
        let combinations: [(PNGWriter.ColorType, [Int])] = [
            (.gray, [1, 2, 4, 8, 16]), (.rgb, [8, 16]), (.palette, [1, 2, 4, 8]),
            (.grayAlpha, [8, 16]), (.rgba, [8, 16]),
        ]
        var seed = 0
        for (colorType, depths) in combinations {
            for depth in depths {
                for interlaced in [false, true] {
                    for withTRNS in [false, true] where !(withTRNS && (colorType == .grayAlpha || colorType == .rgba)) {
                        seed += 1
                        let (w, h) = (37 + seed % 5, 23 + seed % 3)
                        var png = PNGWriter(width: w, height: h, colorType: colorType, bitDepth: depth,
                                            samples: samples(count: w * h * colorType.channels, bitDepth: depth, seed: seed))
                        png.interlaced = interlaced
                        if colorType == .palette {
                            // Fewer entries than indices can reach: out-of-range indices too.
                            let entries = max(1, (1 << depth) - 1)
                            png.palette = (0..<(entries * 3)).map { UInt8(($0 * 37 + seed) & 0xFF) }
                            if withTRNS { png.trns = (0..<max(1, entries / 2)).map { UInt8(($0 * 91) & 0xFF) } }
                        } else if withTRNS {
                            // A key that the samples hit (0), wider than the depth allows for
                            // low depths (libpng masks it).
                            let key: UInt16 = depth < 8 ? UInt16(1 << depth) : 0
                            png.trns = colorType == .gray ? be16(key) : be16(key) + be16(0) + be16(0)
                        }
                        let name = "\(colorType) \(depth)-bit\(interlaced ? " Adam7" : "")\(withTRNS ? " tRNS" : "")"
                        for shift in 0..<5 {
                            let bytes = refiltered(png, shift: shift)
                            XCTAssertTrue(assertPathsAgree(bytes, "\(name) shift \(shift)"), "\(name): the fast path declined")
                        }
                    }
                }
            }
        }
    }

    func testLibpngEncodedPhotosMatchLibpng() throws {
        for alpha: Int32 in [0, 1] {
            let (w, h) = (301, 203)
            let px = Pixels.pattern(width: w, height: h, alpha: alpha == 1, seed: 5)
            let png = try XCTUnwrap(anchorBytes { anchors_encode_png(px, Int32(w), Int32(h), alpha, $0, $1) })
            XCTAssertTrue(assertPathsAgree(png, "libpng-encoded alpha \(alpha)"))
        }
    }

    // MARK: Hostile input

    private func sample() -> PNGWriter {
        PNGWriter(width: 40, height: 30, colorType: .rgb, bitDepth: 8,
                  samples: samples(count: 40 * 30 * 3, bitDepth: 8, seed: 3))
    }

    /// The file with its IDAT payload replaced by `payload` (CRC recomputed).
    private func withIDAT(_ payload: [UInt8]) -> [UInt8] {
        let png = sample()
        var out = Array(png.encode().prefix(8 + 25))
        out += PNGWriter.chunk("IDAT", payload)
        return out + PNGWriter.chunk("IEND", [])
    }

    /// The fast path alone fails with a PNG error containing `words`, and the automatic
    /// choice ends exactly as libpng does: failing too, unless `libpngAccepts`.
    private func assertFastFails(_ bytes: [UInt8], _ words: String, libpngAccepts: Bool = false,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let fast = decode(bytes, IC_PNG_PATH_FAST)
        XCTAssertNotEqual(fast.status, IC_OK, file: file, line: line)
        XCTAssertTrue(fast.message.hasPrefix("PNG: ") && fast.message.contains(words), fast.message, file: file, line: line)
        assertPathsAgree(bytes, words, file: file, line: line)
        XCTAssertEqual(decode(bytes, IC_PNG_PATH_AUTO).status == IC_OK, libpngAccepts, file: file, line: line)
    }

    func testTruncatedIDATFailsCleanly() {
        let whole = sample().encode()
        let idatEnd = whole.count - 12
        assertFastFails(Array(whole[..<(idatEnd - 100)]), "truncated IDAT")
    }

    func testBadZlibHeaderFailsCleanly() {
        var stream = PNGWriter.zlibStored(sample().rawData())
        stream[0] = 0x79 // compression method 9
        assertFastFails(withIDAT(stream), "zlib")
    }

    func testWrongDecompressedSizeFailsCleanly() {
        let raw = sample().rawData()
        assertFastFails(withIDAT(PNGWriter.zlibStored(Array(raw.dropLast(7)))), "image data is")
        // Too much data: libpng warns and uses the image's bytes; so does the automatic choice.
        assertFastFails(withIDAT(PNGWriter.zlibStored(raw + [0, 0, 0])), "zlib", libpngAccepts: true)
    }

    func testBadFilterTypeFailsCleanly() {
        var raw = sample().rawData()
        raw[(40 * 3 + 1) * 7] = 5 // row 7's filter byte
        assertFastFails(withIDAT(PNGWriter.zlibStored(raw)), "bad filter type 5 at row 7")
    }

    func testHugeIHDRIsRefusedBeforeAllocation() {
        var png = Array(sample().encode())
        png.replaceSubrange(16..<24, with: be32(100_000) + be32(100_000))
        png.replaceSubrange(29..<33, with: be32(CRC32.checksum(Array(png[12..<29]))))
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        var image: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        var stats = ic_decode_stats()
        let status = png.withUnsafeBufferPointer {
            ic_decode_png_path($0.baseAddress, $0.count, &options, IC_PNG_PATH_FAST, &image, &stats, &err)
        }
        XCTAssertEqual(status, IC_ERR_LIMIT_EXCEEDED)
        XCTAssertNil(image)
        XCTAssertLessThan(stats.peak_bytes, 1 << 20)
        assertPathsAgree(png, "100000x100000")
    }

    func testOverTheMemoryLimitFallsBackToStreamingLibpng() throws {
        // 1000x1000 RGB: the filtered image (3 MB) and the output (4 MB) do not both fit in
        // 6 MB, the output alone does; libpng streams rows and succeeds.
        let (w, h) = (1000, 1000)
        let px = Pixels.pattern(width: w, height: h, alpha: false, seed: 9)
        let png = try XCTUnwrap(anchorBytes { anchors_encode_png(px, Int32(w), Int32(h), 0, $0, $1) })
        let limit: UInt64 = 6 << 20
        XCTAssertEqual(decode(png, IC_PNG_PATH_FAST, maxMemory: limit).status, IC_ERR_LIMIT_EXCEEDED)
        let automatic = decode(png, IC_PNG_PATH_AUTO, maxMemory: limit)
        XCTAssertEqual(automatic.status, IC_OK)
        XCTAssertTrue(automatic.pixels == decode(png, IC_PNG_PATH_LIBPNG).pixels)
    }
}
