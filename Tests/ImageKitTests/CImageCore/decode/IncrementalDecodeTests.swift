import CAnchors
import CImageCore
import Foundation
import XCTest

/// The incremental decode (ic_incremental.h): fed in pieces split anywhere, it
/// ends with exactly what ic_decode gives for the whole body; JPEG, PNG and WebP
/// stills and a GIF's first frame are consumed as they arrive (limits as soon as the
/// header is in, cancellation between pieces, little input held for JPEG, partial
/// images), and a malformed PNG, WebP or GIF gets ic_decode's answer.
final class IncrementalDecodeTests: XCTestCase {
    private typealias Outcome = DecodeOutcome

    private var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
    }

    private var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }

    private func options(thumbnail: UInt32 = 0, maxPixels: UInt64 = 0, maxMemory: UInt64 = 0,
                         allFrames: Bool = false) -> ic_decode_options {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        if maxPixels > 0 { o.limits.max_pixels = maxPixels }
        if maxMemory > 0 { o.limits.max_memory_bytes = maxMemory }
        o.all_frames = allFrames ? 1 : 0
        o.thumbnail_width = thumbnail
        o.thumbnail_height = thumbnail
        return o
    }

    private func outcome(_ status: ic_status, _ image: UnsafeMutablePointer<ic_image>?) -> Outcome {
        Outcome(status: status, image: image)
    }

    private func whole(_ data: [UInt8], _ options: ic_decode_options) -> Outcome {
        var o = options
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = ic_decode(data, data.count, &o, &out, nil, &err)
        return outcome(st, out)
    }

    /// Feeds `data` in pieces of the given sizes (the last repeats), then finishes.
    private func incremental(_ data: [UInt8], _ options: ic_decode_options, pieces: (inout SplitMix) -> Int,
                             rng: inout SplitMix) -> Outcome {
        var o = options
        var inc: OpaquePointer?
        var err = ic_error()
        XCTAssertEqual(ic_incremental_new(&o, &inc, &err), IC_OK)
        defer { ic_incremental_free(inc) }
        var at = 0
        while at < data.count {
            let n = min(max(1, pieces(&rng)), data.count - at)
            let st = data.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress! + at, n, &err) }
            at += n
            if st != IC_OK { return Outcome(status: st) }
        }
        var out: UnsafeMutablePointer<ic_image>?
        return outcome(ic_incremental_finish(inc, &out, nil, &err), out)
    }

    private func assertSame(_ data: [UInt8], _ label: String, thumbnail: UInt32, maxPixels: UInt64 = 0,
                            maxMemory: UInt64 = 0, allFrames: Bool = false, rng: inout SplitMix,
                            file: StaticString = #filePath, line: UInt = #line) {
        let o = options(thumbnail: thumbnail, maxPixels: maxPixels, maxMemory: maxMemory, allFrames: allFrames)
        let expected = whole(data, o)
        var splits: [(String, (inout SplitMix) -> Int)] = [
            ("random pieces", { Int($0.next() % 4096) + 1 }),
            ("two pieces", { [count = data.count] r in Int(r.next() % UInt64(max(1, count))) + 1 }),
            ("16 KiB pieces", { _ in 16384 }),
        ]
        if data.count <= 16384 { splits.append(("1-byte pieces", { _ in 1 })) }
        for (name, pieces) in splits {
            let got = incremental(data, o, pieces: pieces, rng: &rng)
            assertEqual(got, expected, "\(label), \(name), thumbnail \(thumbnail)", file: file, line: line)
        }
    }

    private func assertEqual(_ got: Outcome, _ expected: Outcome, _ what: String, file: StaticString = #filePath,
                             line: UInt = #line) {
        XCTAssertEqual(got.status, expected.status, what, file: file, line: line)
        XCTAssertEqual(got.width, expected.width, what, file: file, line: line)
        XCTAssertEqual(got.height, expected.height, what, file: file, line: line)
        XCTAssertEqual(got.opaque, expected.opaque, what, file: file, line: line)
        XCTAssertEqual(got.orientation, expected.orientation, what, file: file, line: line)
        XCTAssertEqual(got.frameCount, expected.frameCount, what, file: file, line: line)
        XCTAssertEqual(got.loopCount, expected.loopCount, what, file: file, line: line)
        XCTAssertEqual(got.delays, expected.delays, what, file: file, line: line)
        XCTAssertTrue(got.pixels == expected.pixels, "\(what): pixels differ", file: file, line: line)
    }

    private func imageFiles() throws -> [URL] {
        var files: [URL] = []
        let manifestURL = corpus.appendingPathComponent("manifest.json")
        if FileManager.default.fileExists(atPath: manifestURL.path) {
            let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as! [String: Any]
            for entry in manifest["entries"] as! [[String: Any]]
            where ["jpeg", "png", "gif", "webp"].contains(entry["format"] as! String) {
                files.append(corpus.appendingPathComponent(entry["path"] as! String))
            }
        }
        let walker = FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil)
        while let url = walker?.nextObject() as? URL {
            if ["jpg", "jpeg", "png", "gif", "webp"].contains(url.pathExtension.lowercased()) { files.append(url) }
        }
        return files
    }

    func testEveryCorpusAndFixtureFileDecodesTheSameSplitAnywhere() throws {
        let files = try imageFiles()
        XCTAssertGreaterThan(files.count, 50)
        var rng = SplitMix(seed: 0x1C_0DE)
        for url in files {
            let data = try [UInt8](Data(contentsOf: url))
            guard !data.isEmpty else { continue }
            assertSame(data, url.lastPathComponent, thumbnail: 0, rng: &rng)
            assertSame(data, url.lastPathComponent, thumbnail: 256, rng: &rng)
        }
    }

    /// Larger generated pictures: baseline, progressive (with the 1/8 DC-only path) and
    /// restart-free JPEGs; Adam7 and plain PNGs, resampled to thumbnails and at full size.
    func testGeneratedJPEGsAndPNGsDecodeTheSameSplitAnywhere() {
        var rng = SplitMix(seed: 7)
        let (w, h) = (1203, 805)
        let picture = Pixels.pattern(width: w, height: h, alpha: false, seed: 5)
        let baseline = makeJPEG(picture, width: w, height: h)
        let progressive = makeJPEG(picture, width: w, height: h, progressive: true)
        var png = PNGWriter(width: 301, height: 203, colorType: .rgba, bitDepth: 8,
                            samples: Pixels.pattern(width: 301, height: 203, alpha: true).map { UInt16($0) })
        let plain = png.encode()
        png.interlaced = true
        let adam7 = png.encode()
        for thumbnail: UInt32 in [0, 256, 64] {
            assertSame(baseline, "baseline JPEG", thumbnail: thumbnail, rng: &rng)
            assertSame(progressive, "progressive JPEG", thumbnail: thumbnail, rng: &rng)
            assertSame(plain, "PNG", thumbnail: thumbnail, rng: &rng)
            assertSame(adam7, "Adam7 PNG", thumbnail: thumbnail, rng: &rng)
            assertSame(Array(baseline.prefix(baseline.count * 2 / 3)), "truncated JPEG", thumbnail: thumbnail, rng: &rng)
            assertSame(Array(adam7.prefix(adam7.count / 2)), "truncated Adam7 PNG", thumbnail: thumbnail, rng: &rng)
        }
    }

    private func newDecode(_ options: inout ic_decode_options) -> OpaquePointer? {
        var inc: OpaquePointer?
        var err = ic_error()
        XCTAssertEqual(ic_incremental_new(&options, &inc, &err), IC_OK)
        return inc
    }

    private func feed(_ inc: OpaquePointer?, _ data: ArraySlice<UInt8>) -> ic_status {
        var err = ic_error()
        return data.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress, $0.count, &err) }
    }

    func testThePixelLimitFailsOnceTheHeaderIsIn() {
        let jpeg = makeJPEG(Pixels.pattern(width: 800, height: 600), width: 800, height: 600)
        let png = PNGWriter(width: 800, height: 600, colorType: .rgb, bitDepth: 8,
                            samples: [UInt16](repeating: 9, count: 800 * 600 * 3)).encode()
        let gif = patternGIF(width: 800, height: 600)
        // The header and a little more: far from the whole body.
        for (label, data, header, format) in [("JPEG", jpeg, 2048, IC_FORMAT_JPEG), ("PNG", png, 200, IC_FORMAT_PNG),
                                              ("GIF", gif, 800, IC_FORMAT_GIF)] {
            var o = options()
            o.limits.max_pixels = 1000
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            let st = feed(inc, data.prefix(header))
            XCTAssertEqual(st, IC_ERR_LIMIT_EXCEEDED, label)
            XCTAssertEqual(ic_incremental_format(inc), format, label)
            var out: UnsafeMutablePointer<ic_image>?
            var err = ic_error()
            XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_ERR_LIMIT_EXCEEDED, label)
            XCTAssertTrue(cString(err.message).contains("limit"), label)
            XCTAssertEqual(whole(data, o).status, IC_ERR_LIMIT_EXCEEDED, label)
        }
    }

    func testCancellationStopsTheDecodeMidStream() {
        let jpeg = makeJPEG(Pixels.pattern(width: 640, height: 480), width: 640, height: 480)
        let png = PNGWriter(width: 300, height: 200, colorType: .rgb, bitDepth: 8,
                            samples: [UInt16](repeating: 40, count: 300 * 200 * 3)).encode()
        for (label, data) in [("JPEG", jpeg), ("PNG", png), ("GIF", patternGIF(width: 300, height: 200))] {
            var cancel: Int32 = 0
            withUnsafePointer(to: &cancel) { flag in
                var o = options()
                o.cancel_flag = flag
                let inc = newDecode(&o)
                defer { ic_incremental_free(inc) }
                XCTAssertEqual(feed(inc, data.prefix(data.count / 2)), IC_OK, label)
                XCTAssertEqual(ic_incremental_is_streaming(inc), 1, label)
                ic_cancel_flag_set(UnsafeMutablePointer(mutating: flag), 1)
                XCTAssertEqual(feed(inc, data.dropFirst(data.count / 2)), IC_ERR_CANCELLED, label)
                var out: UnsafeMutablePointer<ic_image>?
                var err = ic_error()
                XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_ERR_CANCELLED, label)
                XCTAssertNil(out)
            }
        }
    }

    /// Cancelled once every piece is in, with every row decoded already: finish still ends
    /// cancelled (as ic_decode with the flag set), so a load cancelled then keeps no image.
    func testCancellationAfterTheLastPieceEndsCancelled() {
        let jpeg = makeJPEG(Pixels.pattern(width: 640, height: 480), width: 640, height: 480)
        for (label, data) in [("JPEG", jpeg), ("GIF", patternGIF(width: 300, height: 200))] {
            var cancel: Int32 = 0
            withUnsafePointer(to: &cancel) { flag in
                var o = options()
                o.cancel_flag = flag
                let inc = newDecode(&o)
                defer { ic_incremental_free(inc) }
                XCTAssertEqual(feed(inc, data[...]), IC_OK, label)
                ic_cancel_flag_set(UnsafeMutablePointer(mutating: flag), 1)
                var out: UnsafeMutablePointer<ic_image>?
                var err = ic_error()
                XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_ERR_CANCELLED, label)
                XCTAssertNil(out, label)
                XCTAssertEqual(whole(data, o).status, IC_ERR_CANCELLED, "\(label): as ic_decode")
            }
        }
    }

    /// A JPEG thumbnail's body is consumed as it comes: the decode holds a piece at most, not
    /// the body. A PNG streams too, with its body kept (for ic_decode, should the stream meet
    /// a malformed file): it holds exactly the bytes fed.
    func testInputHeldWhenFedIn16KiBPieces() {
        var rng = SplitMix(seed: 3)
        let (w, h) = (2400, 1600)
        var noisy = Pixels.pattern(width: w, height: h)
        for i in stride(from: 0, to: noisy.count, by: 4) { noisy[i] &+= UInt8(truncatingIfNeeded: rng.next() % 64) }
        let jpeg = makeJPEG(noisy, width: w, height: h)
        let png = PNGWriter(width: 1000, height: 700, colorType: .rgba, bitDepth: 8,
                            samples: Pixels.pattern(width: 1000, height: 700, alpha: true).map { UInt16($0) }).encode()
        for (label, data) in [("JPEG", jpeg), ("PNG", png)] {
            XCTAssertGreaterThan(data.count, 1 << 20, label)
            var o = options(thumbnail: 256)
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            var most: UInt64 = 0
            for start in stride(from: 0, to: data.count, by: 16384) {
                let end = min(start + 16384, data.count)
                XCTAssertEqual(feed(inc, data[start..<end]), IC_OK, label)
                let held = ic_incremental_buffered_bytes(inc)
                if label == "PNG" { XCTAssertEqual(held, UInt64(end), "PNG keeps its body") }
                most = max(most, held)
            }
            XCTAssertEqual(ic_incremental_is_streaming(inc), 1, label)
            if label == "JPEG" { XCTAssertLessThanOrEqual(most, 32768, "JPEG: held \(most) of \(data.count) bytes") }
            var out: UnsafeMutablePointer<ic_image>?
            var err = ic_error()
            XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_OK, label)
            XCTAssertEqual(ic_incremental_buffered_bytes(inc), 0, "\(label): nothing held after finish")
            XCTAssertEqual(out.map { max($0.pointee.width, $0.pointee.height) }, 256, label)
            ic_image_free(out)
        }
    }

    /// Feeds the first half of `data` and checks the partial image: `width` x `height` (the
    /// output size, a `thumbnail` box's when one is given), the top `1/fraction` of its rows as
    /// the whole decode has them, the bottom `1/fraction` transparent.
    private func assertHalfFedShowsTopRows(_ data: [UInt8], width w: Int, height h: Int, fraction: Int,
                                           thumbnail: UInt32 = 0, streams: Bool = true,
                                           file: StaticString = #filePath, line: UInt = #line) throws {
        let final = whole(data, options(thumbnail: thumbnail))
        XCTAssertEqual(final.status, IC_OK, file: file, line: line)
        XCTAssertFalse(final.pixels.suffix(w * 4).allSatisfy { $0 == 0 }, "the last row is not transparent",
                       file: file, line: line)
        var o = options(thumbnail: thumbnail)
        let inc = newDecode(&o)
        defer { ic_incremental_free(inc) }
        var partial: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        XCTAssertEqual(ic_incremental_partial(inc, &partial, &err), IC_OK, file: file, line: line)
        XCTAssertNil(partial, "nothing decoded yet", file: file, line: line)
        XCTAssertEqual(feed(inc, data.prefix(data.count / 2)), IC_OK, file: file, line: line)
        if streams { XCTAssertEqual(ic_incremental_is_streaming(inc), 1, file: file, line: line) }
        XCTAssertEqual(ic_incremental_partial(inc, &partial, &err), IC_OK, file: file, line: line)
        let shown = outcome(IC_OK, try XCTUnwrap(partial, file: file, line: line))
        XCTAssertEqual(shown.width, w, file: file, line: line)
        XCTAssertEqual(shown.height, h, file: file, line: line)
        let rowBytes = w * 4
        let top = rowBytes * (h / fraction), bottom = rowBytes * (h - h / fraction)
        XCTAssertTrue(shown.pixels[0..<top] == final.pixels[0..<top], "top rows are decoded", file: file, line: line)
        XCTAssertTrue(shown.pixels[bottom...].allSatisfy { $0 == 0 }, "bottom rows are transparent",
                      file: file, line: line)
    }

    func testPartialImageOfAHalfFedPNGShowsTheTopRows() throws {
        let (w, h) = (320, 240)
        let png = PNGWriter(width: w, height: h, colorType: .rgb, bitDepth: 8,
                            samples: Pixels.pattern(width: w, height: h, alpha: false).enumerated()
                                .filter { $0.offset % 4 != 3 }.map { UInt16($0.element) }).encode()
        try assertHalfFedShowsTopRows(png, width: w, height: h, fraction: 4)
    }

    /// The chunks of a PNG (type, data), after the signature.
    private func chunks(_ png: [UInt8]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        var at = 8
        while at + 12 <= png.count {
            let high = Int(png[at]) << 24 | Int(png[at + 1]) << 16
            let length = high | Int(png[at + 2]) << 8 | Int(png[at + 3])
            out.append((String(decoding: png[(at + 4)..<(at + 8)], as: UTF8.self), Array(png[(at + 8)..<(at + 8 + length)])))
            at += 12 + length
        }
        return out
    }

    /// The signature, then the chunks as given (each already encoded).
    private func assemble(_ encoded: [[UInt8]]) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + encoded.flatMap { $0 }
    }

    /// `stream` in IDAT chunks of 8 KiB up to `last`, and one more with the rest.
    private func idats(_ stream: [UInt8], lastFrom last: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var at = 0
        while at < last {
            let n = min(8192, last - at)
            out.append(PNGWriter.chunk("IDAT", Array(stream[at..<(at + n)])))
            at += n
        }
        out.append(PNGWriter.chunk("IDAT", Array(stream[at...])))
        return out
    }

    /// Malformed PNGs on which libpng's progressive reader (the previous engine) and
    /// ic_decode disagreed, and others the stream meets late: the streamed decode gives
    /// ic_decode's status and pixels, whatever the pieces.
    func testMalformedPNGsDecodeAsTheWholeBodyDoes() {
        var rng = SplitMix(seed: 11)
        let (w, h) = (301, 203)
        let parts = chunks(PNGWriter(width: w, height: h, colorType: .rgba, bitDepth: 8,
                                     samples: Pixels.pattern(width: w, height: h, alpha: true).map { UInt16($0) }).encode())
        let ihdr = parts.filter { $0.0 == "IHDR" }.map { PNGWriter.chunk($0.0, $0.1) }
        let stream = parts.first { $0.0 == "IDAT" }!.1
        let iend = [PNGWriter.chunk("IEND", [])]
        // The last stored block's header (BFINAL and type, LEN, NLEN), in the last IDAT.
        var lastBlock = 2
        while stream[lastBlock] & 1 == 0 {
            lastBlock += 5 + (Int(stream[lastBlock + 1]) | Int(stream[lastBlock + 2]) << 8)
        }
        let good = assemble(ihdr + idats(stream, lastFrom: lastBlock - 16) + iend)
        var badStream = stream
        badStream[lastBlock + 3] ^= 0xFF
        let corruptThenCut = Array(assemble(ihdr + idats(badStream, lastFrom: lastBlock - 16) + iend).dropLast(2000))
        var late = idats(stream, lastFrom: lastBlock - 16)
        late[late.count - 2][late[late.count - 2].count - 1] ^= 0x01
        let badLateCRC = assemble(ihdr + late + iend)
        var badAdler = stream
        badAdler[badAdler.count - 1] ^= 0x01
        let adlerMismatch = assemble(ihdr + idats(badAdler, lastFrom: lastBlock - 16) + iend)
        let trailing = good + (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let noIEND = Array(good.dropLast(12))
        let cutInIEND = Array(good.dropLast(5))
        let cutInIDAT = Array(good.dropLast(12 + 100))
        var palette = PNGWriter(width: 64, height: 48, colorType: .palette, bitDepth: 8,
                                samples: (0..<(64 * 48)).map { UInt16($0 % 7) })
        var entries: [UInt8] = []
        for i in 0..<7 { entries += [UInt8(i * 30), UInt8(255 - i * 30), 90] }
        palette.palette = entries
        let paletteGood = palette.encode()
        palette.chunksAfterData = [("PLTE", [UInt8](repeating: 200, count: 21))]
        let duplicatePLTE = palette.encode()
        palette.chunksAfterData = [("tEXt", Array("Comment\0late".utf8))]
        let textAfter = palette.encode()

        XCTAssertEqual(whole(good, options()).status, IC_OK, "the unbroken file decodes")
        var o = options()
        let inc = newDecode(&o)
        XCTAssertEqual(feed(inc, good[...]), IC_OK)
        XCTAssertEqual(ic_incremental_is_streaming(inc), 1, "the unbroken file streams")
        ic_incremental_free(inc)
        XCTAssertNotEqual(whole(corruptThenCut, options()).status, IC_OK, "corrupt and cut short fails")
        let cases: [(String, [UInt8])] = [
            ("several IDATs", good), ("corrupt deflate data in the last IDAT, then cut", corruptThenCut),
            ("bad CRC in a late IDAT", badLateCRC), ("Adler-32 mismatch", adlerMismatch),
            ("garbage after IEND", trailing), ("no IEND", noIEND), ("cut in IEND", cutInIEND),
            ("cut in the last IDAT", cutInIDAT), ("palette", paletteGood),
            ("duplicate PLTE after the image data", duplicatePLTE), ("tEXt after the image data", textAfter),
        ]
        for (label, data) in cases {
            for thumbnail: UInt32 in [0, 64] { assertSame(data, label, thumbnail: thumbnail, rng: &rng) }
        }
    }

    func testPartialImageOfAHalfFedBaselineJPEGShowsTheTopRows() throws {
        let (w, h) = (640, 480)
        try assertHalfFedShowsTopRows(makeJPEG(Pixels.pattern(width: w, height: h), width: w, height: h),
                                      width: w, height: h, fraction: 8)
    }

    func testJPEGPNGAndWebPStillsAndFirstFrameGIFsStream() {
        let frame = Pixels.pattern(width: 64, height: 64)
        let second = Pixels.pattern(width: 64, height: 64, seed: 90)
        let animated = anchorBytes { out, size in
            frame.withUnsafeBufferPointer { a in
                second.withUnsafeBufferPointer { b in
                    var frames: [UnsafePointer<UInt8>?] = [a.baseAddress, b.baseAddress]
                    return anchors_encode_webp_animation(&frames, 2, 64, 64, 50, out, size)
                }
            }
        }!
        XCTAssertEqual(animated[20] & 0x02, 0x02, "VP8X announces an animation")
        let gif = GIFWriter(width: 64, height: 64, globalPalette: [0, 0, 0, 255, 255, 255],
                            frames: [.init(width: 64, height: 64, indices: [UInt8](repeating: 1, count: 64 * 64))]).encode()
        let animatedGIF = animatedGIF().encode()
        let cases: [(String, [UInt8], Bool, Int32)] = [
            ("JPEG", makeJPEG(Pixels.pattern(width: 64, height: 64), width: 64, height: 64), false, 1),
            ("PNG", PNGWriter(width: 64, height: 64, colorType: .rgb, bitDepth: 8,
                              samples: [UInt16](repeating: 1, count: 64 * 64 * 3)).encode(), false, 1),
            ("lossy WebP", makeWebP(frame, width: 64, height: 64, quality: 80), false, 1),
            ("lossless WebP", makeWebP(frame, width: 64, height: 64, quality: -1), false, 1),
            ("animated WebP", animated, false, 0),
            ("GIF", gif, false, 1), ("GIF, all frames", gif, true, 0),
            ("animated GIF", animatedGIF, false, 1), ("animated GIF, all frames", animatedGIF, true, 0),
        ]
        for (label, data, allFrames, streams) in cases {
            var o = options(allFrames: allFrames)
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            _ = feed(inc, data[...])
            XCTAssertEqual(ic_incremental_is_streaming(inc), streams, label)
        }
    }

    /// A noisy picture, so that its WebP is large enough to arrive in several pieces.
    private func noisyWebP(width w: Int, height h: Int, alpha: Bool, quality: Float) -> [UInt8] {
        var rng = SplitMix(seed: 11)
        var px = Pixels.pattern(width: w, height: h, alpha: alpha)
        for i in stride(from: 0, to: px.count, by: 4) { px[i] &+= UInt8(truncatingIfNeeded: rng.next() % 48) }
        return makeWebP(px, width: w, height: h, quality: quality)
    }

    /// The offset of the first chunk named `fourCC` in a WebP's RIFF container.
    private func chunkOffset(_ webp: [UInt8], _ fourCC: String) -> Int? {
        var at = 12
        while at + 8 <= webp.count {
            let size = Int(webp[at + 4]) | Int(webp[at + 5]) << 8 | Int(webp[at + 6]) << 16 | Int(webp[at + 7]) << 24
            if String(decoding: webp[at..<at + 4], as: UTF8.self) == fourCC { return at }
            at += 8 + size + (size & 1)
        }
        return nil
    }

    private func settingLE32(_ data: [UInt8], at offset: Int, _ value: UInt32) -> [UInt8] {
        var out = data
        for i in 0..<4 { out[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        return out
    }

    func testAStillWebPStreamsOnceItsHeadersAreIn() {
        for (label, data) in [("lossy", noisyWebP(width: 900, height: 600, alpha: false, quality: 80)),
                              ("lossy with alpha", noisyWebP(width: 900, height: 600, alpha: true, quality: 80)),
                              ("lossless", noisyWebP(width: 300, height: 200, alpha: true, quality: -1))] {
            var o = options()
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            let image = chunkOffset(data, label == "lossless" ? "VP8L" : "VP8 ")!
            XCTAssertEqual(feed(inc, data.prefix(image)), IC_OK, label)
            XCTAssertEqual(ic_incremental_is_streaming(inc), 0, "\(label): the image data's header is not in yet")
            XCTAssertEqual(feed(inc, data[image..<image + 64]), IC_OK, label)
            XCTAssertEqual(ic_incremental_is_streaming(inc), 1, label)
            XCTAssertEqual(feed(inc, data[(image + 64)...]), IC_OK, label)
            var out: UnsafeMutablePointer<ic_image>?
            var err = ic_error()
            let got = outcome(ic_incremental_finish(inc, &out, nil, &err), out)
            let expected = whole(data, o)
            XCTAssertEqual(got.status, IC_OK, label)
            XCTAssertTrue(got.pixels == expected.pixels, "\(label): pixels differ")
        }
    }

    /// Malformed WebPs: the engine streams them, and ends with ic_decode's answer on the whole body.
    func testMalformedWebPsEndAsTheWholeDecodeEnds() {
        var rng = SplitMix(seed: 21)
        let lossy = noisyWebP(width: 700, height: 500, alpha: false, quality: 80)
        let alpha = noisyWebP(width: 700, height: 500, alpha: true, quality: 80)
        let lossless = noisyWebP(width: 300, height: 200, alpha: true, quality: -1)
        let alph = chunkOffset(alpha, "ALPH")!
        var badAlpha = alpha
        for i in alph + 9..<min(alph + 200, alpha.count) { badAlpha[i] ^= 0x5A }
        let vp8 = chunkOffset(lossy, "VP8 ")!
        let vp8Size = UInt32(lossy.count - vp8 - 8)
        var garbage: [UInt8] = []
        for _ in 0..<3000 { garbage.append(UInt8(truncatingIfNeeded: rng.next())) }
        var cases: [(String, [UInt8])] = [
            ("corrupt ALPH", badAlpha),
            ("RIFF claims more", settingLE32(lossy, at: 4, UInt32(lossy.count) + 5000)),
            ("VP8 chunk claims more", settingLE32(lossy, at: vp8 + 4, vp8Size + 777)),
            ("RIFF claims less", settingLE32(lossy, at: 4, UInt32(lossy.count) / 2)),
            ("trailing garbage", lossy + garbage),
            ("lossless with trailing garbage", lossless + garbage),
        ]
        for (label, data) in [("lossy", lossy), ("lossy with alpha", alpha), ("lossless", lossless)] {
            cases.append(("\(label) cut at 2/3", Array(data.prefix(data.count * 2 / 3))))
            cases.append(("\(label) cut in its last bytes", Array(data.dropLast(3))))
        }
        var corrupt = lossy
        for i in stride(from: vp8 + 2000, to: lossy.count - 100, by: 997) { corrupt[i] ^= 0xFF }
        cases.append(("corrupt VP8 data", corrupt))
        for (label, data) in cases {
            for thumbnail: UInt32 in [0, 256] {
                assertSame(data, label, thumbnail: thumbnail, rng: &rng)
            }
        }
        XCTAssertNotEqual(whole(Array(lossy.prefix(lossy.count * 2 / 3)), options()).status, IC_OK,
                          "a cut body fails whole, so the streamed one must fail as well")
    }

    /// The fuzzers' inputs that once broke the incremental decode, with the fuzzers' limits.
    func testFuzzRegressionsDecodeTheSameSplitAnywhereWithTheFuzzersLimits() throws {
        let directory = fixtures.appendingPathComponent("fuzz-regressions")
        var rng = SplitMix(seed: 5)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertTrue(files.contains("webp-vp8x-before-its-image-header.webp"))
        XCTAssertTrue(files.contains("jpeg-suspended-inside-the-sos-smoothing-reads.jpg"))
        for file in files {
            let data = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
            // 2: a progressive JPEG's 1/8 scale, with block smoothing.
            for thumbnail: UInt32 in [0, 62, 2] {
                assertSame(data, file, thumbnail: thumbnail, maxPixels: 1 << 16, rng: &rng)
            }
        }
    }

    func testPartialImageOfAHalfFedLossyWebPShowsTheTopRows() throws {
        let (w, h) = (1200, 900)
        let webp = noisyWebP(width: w, height: h, alpha: false, quality: 90)
        XCTAssertGreaterThan(webp.count, 64 * 1024)
        try assertHalfFedShowsTopRows(webp, width: w, height: h, fraction: 8)
    }

    // MARK: GIF

    /// A 256-colour palette: entry i is (i, 255 - i, 7i).
    private static let gifPalette: [UInt8] = (0..<256).flatMap {
        [UInt8($0), UInt8(255 - $0), UInt8(truncatingIfNeeded: $0 * 7)]
    }

    /// Bytes of a GIF's header with `gifPalette` as its global colour table: the screen
    /// descriptor and the table.
    private static let gifHeaderBytes = 13 + 256 * 3

    /// Palette indices of a `w` x `h` pattern (every row differs).
    private func gifIndices(_ w: Int, _ h: Int, seed: Int = 0) -> [UInt8] {
        (0..<(w * h)).map { UInt8(truncatingIfNeeded: ($0 % w) * 3 + ($0 / w) * 5 + seed) }
    }

    /// A still GIF of a `width` x `height` pattern on `gifPalette`.
    private func patternGIF(width w: Int, height h: Int, interlaced: Bool = false) -> [UInt8] {
        GIFWriter(width: w, height: h, globalPalette: Self.gifPalette,
                  frames: [.init(width: w, height: h, indices: gifIndices(w, h), interlaced: interlaced)]).encode()
    }

    /// A 60x40 animation that loops 5 times: a first frame with a transparent index, then
    /// frames with offsets, disposal, a local colour table and interlacing.
    private func animatedGIF() -> GIFWriter {
        GIFWriter(width: 60, height: 40, globalPalette: Self.gifPalette, frames: [
            .init(left: 3, top: 2, width: 50, height: 30, indices: gifIndices(50, 30), transparentIndex: 9,
                  disposal: 2, delayCentiseconds: 12),
            .init(left: 10, top: 5, width: 30, height: 20, indices: gifIndices(30, 20, seed: 1), disposal: 3,
                  delayCentiseconds: 4),
            .init(width: 60, height: 40, indices: gifIndices(60, 40, seed: 2).map { $0 % 4 },
                  localPalette: [9, 9, 9, 90, 90, 90, 180, 180, 180, 250, 250, 250], delayCentiseconds: 7,
                  interlaced: true),
        ], loopCount: 5)
    }

    /// A GIF streams from the byte that completes its global colour table — a still, or an
    /// animation's first frame — and ends as the whole decode does; with all_frames its body
    /// is kept and decoded at the end.
    func testAGIFStreamsOnceItsHeaderIsIn() {
        let header = Self.gifHeaderBytes
        let still = patternGIF(width: 120, height: 90), animation = animatedGIF().encode()
        for (label, data, allFrames) in [("still", still, false), ("animation", animation, false),
                                         ("animation, all frames", animation, true)] {
            var o = options(allFrames: allFrames)
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            XCTAssertEqual(feed(inc, data.prefix(header - 1)), IC_OK, label)
            XCTAssertEqual(ic_incremental_format(inc), IC_FORMAT_GIF, label)
            XCTAssertEqual(ic_incremental_is_streaming(inc), 0, "\(label): the colour table is not all in")
            XCTAssertEqual(feed(inc, data[(header - 1)..<header]), IC_OK, label)
            XCTAssertEqual(ic_incremental_is_streaming(inc), allFrames ? 0 : 1, label)
            XCTAssertEqual(feed(inc, data[header...]), IC_OK, label)
            XCTAssertEqual(ic_incremental_is_streaming(inc), allFrames ? 0 : 1, label)
            XCTAssertEqual(ic_incremental_buffered_bytes(inc), UInt64(data.count), "\(label): the body is kept")
            var out: UnsafeMutablePointer<ic_image>?
            var err = ic_error()
            let got = outcome(ic_incremental_finish(inc, &out, nil, &err), out)
            let expected = whole(data, o)
            XCTAssertEqual(expected.status, IC_OK, label)
            XCTAssertEqual(expected.frameCount, allFrames ? 3 : 1, label)
            XCTAssertEqual(expected.loopCount, label == "still" ? 0 : 5, label)
            assertEqual(got, expected, label)
        }
    }

    func testPartialImageOfAHalfFedGIFShowsTheTopRows() throws {
        let gif = patternGIF(width: 320, height: 240)
        try assertHalfFedShowsTopRows(gif, width: 320, height: 240, fraction: 4)
        try assertHalfFedShowsTopRows(gif, width: 256, height: 192, fraction: 4, thumbnail: 256)
    }

    /// An interlaced first image is decoded as it arrives, but its rows are done only at its end.
    func testAHalfFedInterlacedGIFStreamsAndShowsNothingBeforeItsEnd() {
        let gif = patternGIF(width: 320, height: 240, interlaced: true)
        for thumbnail: UInt32 in [0, 256] {
            var o = options(thumbnail: thumbnail)
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            XCTAssertEqual(feed(inc, gif.prefix(gif.count / 2)), IC_OK)
            XCTAssertEqual(ic_incremental_is_streaming(inc), 1)
            var partial: UnsafeMutablePointer<ic_image>?
            var err = ic_error()
            XCTAssertEqual(ic_incremental_partial(inc, &partial, &err), IC_OK)
            XCTAssertNil(partial, "thumbnail \(thumbnail): no rows before the image's end")
            XCTAssertEqual(feed(inc, gif[(gif.count / 2)...]), IC_OK)
            var out: UnsafeMutablePointer<ic_image>?
            let got = outcome(ic_incremental_finish(inc, &out, nil, &err), out)
            assertEqual(got, whole(gif, o), "interlaced, thumbnail \(thumbnail)")
        }
    }

    /// Malformed GIFs, and files whose answer depends on bytes after the first image (a loop
    /// count, whether any image's data ends): the streamed decode gives ic_decode's status,
    /// pixels, frames, delays and loop count, whatever the pieces (1-byte pieces among them).
    func testMalformedGIFsDecodeAsTheWholeBodyDoes() {
        var rng = SplitMix(seed: 31)
        let header = Self.gifHeaderBytes
        let still = patternGIF(width: 40, height: 30)
        // After the header: the graphic control extension (8 bytes), the image descriptor (10),
        // the LZW minimum code size, then the first sub-block's length and its data.
        let codeSize = header + 18, lzw = header + 20
        XCTAssertEqual(still[header + 8], 0x2C)
        var invalidCode = still
        for i in 0..<3 { invalidCode[lzw + 100 + i] = 0xFF }
        var bigCodeSize = still
        bigCodeSize[codeSize] = 12
        let garbage = (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let comment: [UInt8] = [0x21, 0xFE] + (0..<3).flatMap { i in [255] + [UInt8](repeating: 65 + UInt8(i), count: 255) }
            + [0]
        let earlyEnd = GIFWriter(width: 40, height: 30, globalPalette: Self.gifPalette,
                                 frames: [.init(width: 40, height: 30, indices: Array(gifIndices(40, 30).prefix(40 * 12 + 7)))])
            .encode()
        let offScreen = GIFWriter(width: 40, height: 30, globalPalette: Self.gifPalette, frames: [
            .init(left: 50, top: 0, width: 10, height: 10, indices: gifIndices(10, 10)),
            .init(width: 40, height: 30, indices: gifIndices(40, 30)),
        ]).encode()
        let animation = animatedGIF().encode()
        var plain = animatedGIF()
        plain.loopCount = nil
        let unlooped = plain.encode()
        // The second frame's graphic control extension: the first image's data ends before it.
        let second = (header + 9..<unlooped.count).first { unlooped[$0..<$0 + 3] == [0x21, 0xF9, 4] }!
        let netscape: [UInt8] = [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 7, 0, 0]
        let lateLoopCount = Array(unlooped[..<second]) + netscape + Array(unlooped[second...])
        let interlaced = patternGIF(width: 40, height: 30, interlaced: true)
        let localTable = GIFWriter(width: 40, height: 30, globalPalette: nil, frames: [
            .init(width: 40, height: 30, indices: gifIndices(40, 30), localPalette: Self.gifPalette),
        ]).encode()
        let cases: [(String, [UInt8], ic_status)] = [
            ("still", still, IC_OK),
            ("cut in the LZW data", Array(still.prefix(still.count * 2 / 3)), IC_ERR_TRUNCATED),
            ("invalid LZW code", invalidCode, IC_ERR_CORRUPT),
            ("LZW minimum code size 12", bigCodeSize, IC_ERR_CORRUPT),
            ("garbage after the trailer", still + garbage, IC_OK),
            ("no trailer", Array(still.dropLast()), IC_OK),
            ("garbage block type before any image", Array(still.prefix(header)) + [0x99] + Array(still[header...]),
             IC_ERR_CORRUPT),
            ("garbage block type after the image", Array(still.dropLast()) + [0x99] + garbage, IC_OK),
            ("end code but no block terminator", Array(still.dropLast(2)), IC_ERR_TRUNCATED),
            ("cut in the last LZW byte", Array(still.dropLast(3)), IC_ERR_TRUNCATED),
            ("extension cut off", Array(still.prefix(header)) + Array(comment.prefix(300)), IC_ERR_TRUNCATED),
            ("long comment before the image", Array(still.prefix(header)) + comment + Array(still[header...]), IC_OK),
            ("LZW data ending inside a row", earlyEnd, IC_OK),
            ("first image off the screen", offScreen, IC_OK),
            ("animation", animation, IC_OK),
            ("animation cut in its second frame's extension", Array(animation.prefix(second + 4 + 19)), IC_OK),
            ("loop count after the first image", lateLoopCount, IC_OK),
            ("interlaced", interlaced, IC_OK),
            ("interlaced, cut", Array(interlaced.prefix(interlaced.count / 2)), IC_ERR_TRUNCATED),
            ("local colour table", localTable, IC_OK),
            ("cut in the local colour table", Array(localTable.prefix(13 + 8 + 10 + 100)), IC_ERR_TRUNCATED),
        ]
        for (label, data, status) in cases {
            XCTAssertEqual(whole(data, options()).status, status, "\(label): the whole decode's answer")
            for thumbnail: UInt32 in [0, 24] { assertSame(data, label, thumbnail: thumbnail, rng: &rng) }
            assertSame(data, "\(label), all frames", thumbnail: 0, allFrames: true, rng: &rng)
        }
        XCTAssertEqual(whole(lateLoopCount, options()).loopCount, 7)
    }

    /// A failure met as the first image starts — its own pixel limit, a thumbnail's staging
    /// screen over the memory limit — is ic_decode's only when that image's data ends (it
    /// counts the complete images first): it fails as soon as the data has ended, and a body
    /// cut before is truncated, as it is whole.
    func testLimitsMetAsTheFirstImageStartsFailAsTheWholeDecodeFails() {
        var rng = SplitMix(seed: 41)
        // A 64x48 screen whose image claims 4000 x 3000 pixels (its data fills less).
        let bigImage = GIFWriter(width: 64, height: 48, globalPalette: Self.gifPalette,
                                 frames: [.init(width: 4000, height: 3000, indices: gifIndices(64, 48))]).encode()
        // A thumbnail of an interlaced 600x600 image needs a full-size staging screen (1.4 MB).
        let interlaced = patternGIF(width: 600, height: 600, interlaced: true)
        let plain = patternGIF(width: 600, height: 600)
        let cases: [(String, [UInt8], ic_decode_options, ic_status)] = [
            ("image over the pixel limit", bigImage, options(maxPixels: 1_000_000), IC_ERR_LIMIT_EXCEEDED),
            ("image over the pixel limit, cut", Array(bigImage.prefix(bigImage.count - 20)),
             options(maxPixels: 1_000_000), IC_ERR_TRUNCATED),
            ("staging screen over the memory limit", interlaced, options(thumbnail: 64, maxMemory: 1 << 20),
             IC_ERR_LIMIT_EXCEEDED),
            ("staging screen over the memory limit, cut", Array(interlaced.prefix(interlaced.count / 2)),
             options(thumbnail: 64, maxMemory: 1 << 20), IC_ERR_TRUNCATED),
            ("no staging screen for a plain image", plain, options(thumbnail: 64, maxMemory: 1 << 20), IC_OK),
        ]
        for (label, data, o, status) in cases {
            XCTAssertEqual(whole(data, o).status, status, label)
            assertSame(data, label, thumbnail: o.thumbnail_width, maxPixels: o.limits.max_pixels,
                       maxMemory: o.limits.max_memory_bytes, rng: &rng)
            var opts = o
            let inc = newDecode(&opts)
            defer { ic_incremental_free(inc) }
            let fed = feed(inc, data[...])
            XCTAssertEqual(fed, status == IC_ERR_LIMIT_EXCEEDED ? status : IC_OK, "\(label): the feed's answer")
        }
    }
}
