import CAnchors
import CImageCore
import Foundation
import XCTest

/// The incremental decode (ic_incremental.h): fed in pieces split anywhere, it
/// ends with exactly what ic_decode gives for the whole body; JPEG, PNG and WebP
/// stills are consumed as they arrive (limits as soon as the header is in, cancellation
/// between pieces, little input held for JPEG, partial images), and a malformed
/// PNG or WebP gets ic_decode's answer.
final class IncrementalDecodeTests: XCTestCase {
    private struct Outcome {
        var status: ic_status
        var width = 0, height = 0, opaque = false, orientation = 0
        var pixels: [UInt8] = []
    }

    private var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
    }

    private var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }

    private func options(thumbnail: UInt32 = 0, maxPixels: UInt64 = 0) -> ic_decode_options {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        if maxPixels > 0 { o.limits.max_pixels = maxPixels }
        o.thumbnail_width = thumbnail
        o.thumbnail_height = thumbnail
        return o
    }

    private func outcome(_ status: ic_status, _ image: UnsafeMutablePointer<ic_image>?) -> Outcome {
        var result = Outcome(status: status)
        guard let image else { return result }
        let img = image.pointee
        result.width = Int(img.width)
        result.height = Int(img.height)
        result.opaque = img.is_opaque != 0
        result.orientation = Int(img.orientation)
        result.pixels.reserveCapacity(Int(img.width) * Int(img.height) * 4)
        for y in 0..<Int(img.height) {
            let row = UnsafeBufferPointer(start: img.pixels + y * img.stride, count: Int(img.width) * 4)
            result.pixels.append(contentsOf: row)
        }
        ic_image_free(image)
        return result
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
                            rng: inout SplitMix, file: StaticString = #filePath, line: UInt = #line) {
        let o = options(thumbnail: thumbnail, maxPixels: maxPixels)
        let expected = whole(data, o)
        var splits: [(String, (inout SplitMix) -> Int)] = [
            ("random pieces", { Int($0.next() % 4096) + 1 }),
            ("two pieces", { [count = data.count] r in Int(r.next() % UInt64(max(1, count))) + 1 }),
            ("16 KiB pieces", { _ in 16384 }),
        ]
        if data.count <= 16384 { splits.append(("1-byte pieces", { _ in 1 })) }
        for (name, pieces) in splits {
            let got = incremental(data, o, pieces: pieces, rng: &rng)
            let what = "\(label), \(name), thumbnail \(thumbnail)"
            XCTAssertEqual(got.status, expected.status, what, file: file, line: line)
            XCTAssertEqual(got.width, expected.width, what, file: file, line: line)
            XCTAssertEqual(got.height, expected.height, what, file: file, line: line)
            XCTAssertEqual(got.opaque, expected.opaque, what, file: file, line: line)
            XCTAssertEqual(got.orientation, expected.orientation, what, file: file, line: line)
            XCTAssertTrue(got.pixels == expected.pixels, "\(what): pixels differ", file: file, line: line)
        }
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
        for (label, data) in [("JPEG", jpeg), ("PNG", png)] {
            var o = options()
            o.limits.max_pixels = 1000
            let inc = newDecode(&o)
            defer { ic_incremental_free(inc) }
            // The header and a little more: far from the whole body.
            let st = feed(inc, data.prefix(label == "JPEG" ? 2048 : 200))
            XCTAssertEqual(st, IC_ERR_LIMIT_EXCEEDED, label)
            XCTAssertEqual(ic_incremental_format(inc), label == "JPEG" ? IC_FORMAT_JPEG : IC_FORMAT_PNG)
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
        for (label, data) in [("JPEG", jpeg), ("PNG", png)] {
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

    /// Feeds the first half of `data` and checks the partial image: `width` x `height`, the top
    /// `1/fraction` of its rows as the whole decode has them, the bottom `1/fraction` transparent.
    private func assertHalfFedShowsTopRows(_ data: [UInt8], width w: Int, height h: Int, fraction: Int,
                                           streams: Bool = true, file: StaticString = #filePath,
                                           line: UInt = #line) throws {
        let final = whole(data, options())
        XCTAssertEqual(final.status, IC_OK, file: file, line: line)
        var o = options()
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

    func testOnlyJPEGPNGAndWebPStillsStream() {
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
        let cases: [(String, [UInt8], Int32)] = [
            ("JPEG", makeJPEG(Pixels.pattern(width: 64, height: 64), width: 64, height: 64), 1),
            ("PNG", PNGWriter(width: 64, height: 64, colorType: .rgb, bitDepth: 8,
                              samples: [UInt16](repeating: 1, count: 64 * 64 * 3)).encode(), 1),
            ("lossy WebP", makeWebP(frame, width: 64, height: 64, quality: 80), 1),
            ("lossless WebP", makeWebP(frame, width: 64, height: 64, quality: -1), 1),
            ("animated WebP", animated, 0),
            ("GIF", GIFWriter(width: 64, height: 64, globalPalette: [0, 0, 0, 255, 255, 255],
                              frames: [.init(width: 64, height: 64, indices: [UInt8](repeating: 1, count: 64 * 64))]).encode(), 0),
        ]
        for (label, data, streams) in cases {
            var o = options()
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
        for file in files {
            let data = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
            for thumbnail: UInt32 in [0, 62] {
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
}
