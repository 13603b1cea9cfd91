import CAnchors
import CImageCore
import CImageCore.Testing
import Foundation
import ImageKitTestSupport
import XCTest

/// ImageKit's DC-only decoder for progressive JPEG thumbnails at 1/8 (jpeg_dc.c) against
/// libjpeg's buffered-image path (forced through ic_decode_jpeg_path): the same status and
/// sentence, and the same pixels, for every progressive JPEG of the shared corpus, every
/// corpus JPEG transcoded to progressive, and generated files of every sampling factor
/// (greyscale too), odd sizes, restart intervals and scan scripts (DC with successive
/// approximation, non-interleaved DC, AC scans and AC refinements before the DC is
/// complete), as codec-size decodes and fit and fill thumbnails; incremental decodes end
/// the same; corrupted files fail (or not) as libjpeg's path does.
final class JPEGDCTests: XCTestCase {
    private typealias Outcome = DecodeOutcome

    private struct Box {
        var width: UInt32
        var height: UInt32
        var mode: ic_resize_mode
    }

    /// Scan scripts (jpegtran's syntax) for three-component files.
    private static let scripts: [(String, String?)] = [
        ("libjpeg's progression (DC Al=1, AC before the DC refinement)", nil),
        ("interleaved DC at full precision", "0,1,2: 0-0, 0, 0; 0: 1-63, 0, 0; 1: 1-63, 0, 0; 2: 1-63, 0, 0;"),
        ("non-interleaved DC", "0: 0-0, 0, 0; 1: 0-0, 0, 0; 2: 0-0, 0, 0; 0: 1-63, 0, 0; 2: 1-63, 0, 0; 1: 1-63, 0, 0;"),
        ("DC Al=2 with two refinements",
         "0,1,2: 0-0, 0, 2; 0,1,2: 0-0, 2, 1; 0,1,2: 0-0, 1, 0; 0: 1-63, 0, 0; 1: 1-63, 0, 0; 2: 1-63, 0, 0;"),
        ("AC and AC refinements before the DC refinement",
         "0,1,2: 0-0, 0, 1; 0: 1-5, 0, 2; 1: 1-63, 0, 1; 2: 1-63, 0, 1; 1: 1-63, 1, 0; 2: 1-63, 1, 0; " +
             "0: 6-63, 0, 2; 0: 1-63, 2, 1; 0,1,2: 0-0, 1, 0; 0: 1-63, 1, 0;"),
        ("mixed DC, partial bands, Al=3 chroma",
         "0: 0-0, 0, 1; 1,2: 0-0, 0, 0; 2: 1-2, 0, 1; 1: 1-9, 0, 3; 0: 1-63, 0, 1; 1: 1-9, 3, 2; " +
             "0: 0-0, 1, 0; 1: 10-63, 0, 0; 2: 3-63, 0, 1; 1: 1-9, 2, 1; 1: 1-9, 1, 0; 2: 1-63, 1, 0; " +
             "0: 1-63, 1, 0;"),
    ]

    /// Scan scripts for greyscale files.
    private static let greyScripts: [(String, String?)] = [
        ("libjpeg's progression", nil),
        ("DC Al=1, AC before the refinement", "0: 0-0, 0, 1; 0: 1-9, 0, 0; 0: 0-0, 1, 0; 0: 10-63, 0, 0;"),
        ("DC Al=2", "0: 0-0, 0, 2; 0: 0-0, 2, 1; 0: 1-63, 0, 1; 0: 0-0, 1, 0; 0: 1-63, 1, 0;"),
    ]

    private func decode(_ bytes: [UInt8], _ path: ic_jpeg_path, _ box: Box, maxMemory: UInt64? = nil,
                        cancelled: Bool = false) -> Outcome {
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.thumbnail_width = box.width
        options.thumbnail_height = box.height
        options.thumbnail_mode = box.mode
        if let maxMemory { options.limits.max_memory_bytes = maxMemory }
        var flag: Int32 = cancelled ? 1 : 0
        var image: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let status = withUnsafePointer(to: &flag) { flagPointer in
            options.cancel_flag = flagPointer
            return bytes.withUnsafeBufferPointer {
                ic_decode_jpeg_path($0.baseAddress, $0.count, &options, path, &image, nil, &err)
            }
        }
        return outcome(status, image, err)
    }

    private func outcome(_ status: ic_status, _ image: UnsafeMutablePointer<ic_image>?, _ err: ic_error) -> Outcome {
        Outcome(status: status, image: image, error: err)
    }

    /// Asserts equal outcomes; pixels compared without printing them.
    private func assertSame(_ a: Outcome, _ b: Outcome, _ label: String, file: StaticString = #filePath,
                            line: UInt = #line) {
        XCTAssertEqual(a.status, b.status, label, file: file, line: line)
        XCTAssertEqual(a.message, b.message, label, file: file, line: line)
        XCTAssertEqual(a.width, b.width, label, file: file, line: line)
        XCTAssertEqual(a.height, b.height, label, file: file, line: line)
        XCTAssertTrue(a.pixels == b.pixels, "\(label): pixels differ", file: file, line: line)
    }

    /// The incremental decode of `bytes` fed in pieces of `piece` bytes.
    private func decodeIncrementally(_ bytes: [UInt8], _ box: Box, piece: Int) -> Outcome {
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.thumbnail_width = box.width
        options.thumbnail_height = box.height
        options.thumbnail_mode = box.mode
        var inc: OpaquePointer?
        var err = ic_error()
        guard ic_incremental_new(&options, &inc, &err) == IC_OK else { return Outcome(status: IC_ERR_INTERNAL, message: "") }
        defer { ic_incremental_free(inc) }
        var status = IC_OK
        var at = 0
        while at < bytes.count, status == IC_OK {
            let n = min(piece, bytes.count - at)
            status = bytes.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress! + at, n, &err) }
            at += n
        }
        var image: UnsafeMutablePointer<ic_image>?
        if status == IC_OK { status = ic_incremental_finish(inc, &image, nil, &err) }
        return outcome(status, image, err)
    }

    /// The boxes a file is checked with: its exact 1/8 size stretched (the codec's rows
    /// themselves, in direct mode), and fit and fill thumbnails the 1/8 scale serves.
    private func boxes(_ bytes: [UInt8]) -> [Box] {
        var info = ic_info()
        var err = ic_error()
        guard bytes.withUnsafeBufferPointer({ ic_probe($0.baseAddress, $0.count, &info, &err) }) == IC_OK else {
            return [Box(width: 16, height: 16, mode: IC_RESIZE_FIT)]
        }
        let (w, h) = (info.width, info.height)
        return [Box(width: (w + 7) / 8, height: (h + 7) / 8, mode: IC_RESIZE_STRETCH),
                Box(width: w / 10 + 1, height: 0, mode: IC_RESIZE_FIT),
                Box(width: w / 12 + 1, height: h / 9 + 1, mode: IC_RESIZE_FILL)]
    }

    /// Asserts that the automatic choice (and the incremental decode) agrees with libjpeg's
    /// path for every box; returns how many of those decodes the DC decoder took.
    @discardableResult
    private func assertPathsAgree(_ bytes: [UInt8], _ name: String, incremental: Bool = true,
                                  file: StaticString = #filePath, line: UInt = #line) -> Int {
        var taken = 0
        for box in boxes(bytes) {
            let label = "\(name), box \(box.width)x\(box.height) mode \(box.mode.rawValue)"
            let reference = decode(bytes, IC_JPEG_PATH_LIBJPEG, box)
            let automatic = decode(bytes, IC_JPEG_PATH_AUTO, box)
            assertSame(automatic, reference, label, file: file, line: line)
            let dc = decode(bytes, IC_JPEG_PATH_DC, box)
            if dc.status == IC_OK {
                taken += 1
                XCTAssertTrue(dc.pixels == reference.pixels, "\(label): the DC decoder's pixels differ", file: file, line: line)
            }
            if incremental {
                let streamed = decodeIncrementally(bytes, box, piece: 1 + bytes.count / 7)
                assertSame(streamed, automatic, "\(label): incremental", file: file, line: line)
            }
        }
        return taken
    }

    private func encode(_ pixels: [UInt8], width: Int, height: Int, components: Int32, quality: Int32 = 85,
                        sampling: [(Int32, Int32)], restart: Int32 = 0, scans: String?) -> [UInt8]? {
        func script(_ text: UnsafePointer<CChar>?) -> [UInt8]? {
            var settings = anchors_jpeg_script()
            settings.components = components
            settings.quality = quality
            let s = sampling + Array(repeating: (1, 1), count: 3 - sampling.count)
            settings.h_samp = (s[0].0, s[1].0, s[2].0)
            settings.v_samp = (s[0].1, s[1].1, s[2].1)
            settings.restart_interval = restart
            settings.scans = text
            return anchorBytes { out, size in anchors_encode_jpeg_scans(pixels, Int32(width), Int32(height), &settings, out, size) }
        }
        guard let scans else { return script(nil) }
        return scans.withCString { script($0) }
    }

    private func transcode(_ jpeg: [UInt8], scans: String?, restart: Int32 = 0) -> [UInt8]? {
        func run(_ text: UnsafePointer<CChar>?) -> [UInt8]? {
            anchorBytes { out, size in anchors_jpeg_transcode(jpeg, jpeg.count, text, restart, out, size) }
        }
        guard let scans else { return run(nil) }
        return scans.withCString { run($0) }
    }

    private func rgb(_ rgba: [UInt8]) -> [UInt8] {
        stride(from: 0, to: rgba.count, by: 4).flatMap { rgba[$0..<($0 + 3)] }
    }

    private func grey(_ rgba: [UInt8]) -> [UInt8] {
        stride(from: 0, to: rgba.count, by: 4).map { (i: Int) -> UInt8 in
            let sum: Int = Int(rgba[i]) * 3 + Int(rgba[i + 1]) * 4 + Int(rgba[i + 2])
            return UInt8(sum / 8)
        }
    }

    private var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }

    /// Every JPEG of the shared corpus: the progressive ones as they are (the corpus has none
    /// today, which the count shows), and every one transcoded to progressive with each script.
    func testCorpusJPEGsAndTheirProgressiveTranscodes() throws {
        let manifestURL = corpus.appendingPathComponent("manifest.json")
        guard let manifest = try? JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any],
              let entries = manifest["entries"] as? [[String: Any]] else {
            throw XCTSkip("shared corpus not available at \(corpus.path)")
        }
        var files = 0, progressive = 0, transcoded = 0, taken = 0
        for entry in entries where entry["format"] as? String == "jpeg" {
            guard let path = entry["path"] as? String,
                  let data = try? Data(contentsOf: corpus.appendingPathComponent(path)) else { continue }
            let bytes = [UInt8](data)
            files += 1
            var info = ic_info()
            var err = ic_error()
            if bytes.withUnsafeBufferPointer({ ic_probe($0.baseAddress, $0.count, &info, &err) }) == IC_OK,
               info.is_progressive != 0 {
                progressive += 1
                taken += assertPathsAgree(bytes, path)
            }
            for (name, scans) in Self.scripts {
                for restart: Int32 in [0, 3] {
                    guard let converted = transcode(bytes, scans: scans, restart: restart) else { continue }
                    transcoded += 1
                    taken += assertPathsAgree(converted, "\(path) as \(name), restart \(restart)")
                }
            }
        }
        print("corpus: \(files) JPEGs, \(progressive) progressive, \(transcoded) progressive transcodes, " +
              "\(taken) decodes through the DC decoder")
        XCTAssertGreaterThan(files, 0)
        XCTAssertGreaterThan(taken, 0)
    }

    /// Generated files: every sampling factor the DC decoder takes (and some it gives way on),
    /// greyscale, odd sizes, restart intervals, every scan script.
    func testGeneratedProgressiveFilesOfEverySamplingSizeRestartAndScript() throws {
        let samplings: [(String, [(Int32, Int32)])] = [
            ("4:2:0", [(2, 2)]), ("4:2:2", [(2, 1)]), ("4:4:0", [(1, 2)]), ("4:4:4", [(1, 1)]),
            ("chroma 2x2 over luma 1x1", [(1, 1), (2, 2), (2, 2)]), ("2x2, 2x1, 1x2", [(2, 2), (2, 1), (1, 2)]),
            ("4:1:1 (given way)", [(4, 1)]),
        ]
        let sizes = [(9, 9), (7, 13), (15, 17), (17, 33), (33, 17), (64, 9), (9, 64), (97, 101), (250, 143)]
        var files = 0, taken = 0
        for (i, (w, h)) in sizes.enumerated() {
            let px = SyntheticPhoto.rgba(width: w, height: h, seed: UInt64(40 + i))
            for (s, (samplingName, sampling)) in samplings.enumerated() {
                for (k, (scriptName, scans)) in Self.scripts.enumerated() where (i + s + k) % 2 == 0 {
                    let restart: Int32 = [0, 1, 0, 3][(i + k) % 4]
                    let quality: Int32 = [85, 30, 100, 60][(s + k) % 4]
                    guard let jpeg = encode(rgb(px), width: w, height: h, components: 3, quality: quality,
                                            sampling: sampling, restart: restart, scans: scans) else {
                        XCTFail("libjpeg refused \(samplingName) \(scriptName)")
                        continue
                    }
                    files += 1
                    taken += assertPathsAgree(jpeg, "\(w)x\(h) \(samplingName) q\(quality) restart \(restart), \(scriptName)")
                }
            }
            for (k, (scriptName, scans)) in Self.greyScripts.enumerated() {
                for sampling: (Int32, Int32) in [(1, 1), (2, 2)] {
                    guard let jpeg = encode(grey(px), width: w, height: h, components: 1, sampling: [sampling],
                                            restart: Int32(k % 2) * 2, scans: scans) else {
                        XCTFail("libjpeg refused grey \(scriptName)")
                        continue
                    }
                    files += 1
                    taken += assertPathsAgree(jpeg, "\(w)x\(h) grey \(sampling) \(scriptName)")
                }
            }
        }
        print("generated: \(files) progressive JPEGs, \(taken) decodes through the DC decoder")
        XCTAssertGreaterThan(taken, files)
    }

    /// A photo-sized file and TurboJPEG's own progressive files, with 128 px thumbnails too.
    func testLargerPhotosAndTurboJPEGFiles() throws {
        let (w, h) = (1601, 1067)
        let px = SyntheticPhoto.rgba(width: w, height: h, seed: 9)
        for subsampling: Int32 in [420, 422, 444] {
            let jpeg = makeJPEG(px, width: w, height: h, quality: 92, progressive: true, subsampling: subsampling)
            XCTAssertEqual(assertPathsAgree(jpeg, "TurboJPEG \(subsampling)"), 3)
            for mode in [IC_RESIZE_FIT, IC_RESIZE_FILL] {
                let box = Box(width: 128, height: 128, mode: mode)
                let dc = decode(jpeg, IC_JPEG_PATH_DC, box)
                XCTAssertEqual(dc.status, IC_OK, dc.message)
                assertSame(dc, decode(jpeg, IC_JPEG_PATH_LIBJPEG, box), "TurboJPEG \(subsampling) 128 px \(mode)")
            }
        }
    }

    /// Streaming: the incremental decode holds the bytes from the first scan until the DC is
    /// in (and the segments libjpeg's smoothing reads after it), then the thumbnail is
    /// complete, before the rest of the file arrives; nothing is held afterwards.
    func testStreamedThumbnailIsCompleteOnceTheDCScansAreIn() throws {
        var rng = SplitMix(seed: 3)
        let (w, h) = (2400, 1600)
        var noisy = Pixels.pattern(width: w, height: h)
        for i in stride(from: 0, to: noisy.count, by: 4) { noisy[i] &+= UInt8(truncatingIfNeeded: rng.next() % 64) }
        let jpeg = makeJPEG(noisy, width: w, height: h, progressive: true)
        // libjpeg's progression: the 7th scan refines the DC; its smoothing reads the 8th's header.
        let sos = (2..<(jpeg.count - 1)).filter { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA }
        XCTAssertEqual(sos.count, 10)
        let walkEnd = sos[7] + 2 + Int(jpeg[sos[7] + 2]) << 8 + Int(jpeg[sos[7] + 3])
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.thumbnail_width = 256
        options.thumbnail_height = 256
        var inc: OpaquePointer?
        var err = ic_error()
        XCTAssertEqual(ic_incremental_new(&options, &inc, &err), IC_OK)
        defer { ic_incremental_free(inc) }
        var most: UInt64 = 0
        var completeAt: Int?
        var early: [UInt8] = []
        for start in stride(from: 0, to: jpeg.count, by: 16384) {
            let end = min(start + 16384, jpeg.count)
            XCTAssertEqual(jpeg.withUnsafeBufferPointer { ic_incremental_feed(inc, $0.baseAddress! + start, end - start, &err) }, IC_OK)
            most = max(most, ic_incremental_buffered_bytes(inc))
            var partial: UnsafeMutablePointer<ic_image>?
            XCTAssertEqual(ic_incremental_partial(inc, &partial, &err), IC_OK)
            if completeAt == nil, let partial {
                let last = ic_image_frame(partial, 0)! + Int(partial.pointee.height - 1) * partial.pointee.stride
                if last[3] == 255 {
                    completeAt = end
                    early = outcome(IC_OK, partial, err).pixels
                    continue
                }
            }
            ic_image_free(partial)
        }
        let at = try XCTUnwrap(completeAt, "the thumbnail was never complete before finish")
        XCTAssertGreaterThanOrEqual(at, walkEnd)
        XCTAssertLessThan(at, walkEnd + 16384, "complete with the piece that ends the walk")
        XCTAssertLessThan(at, jpeg.count * 2 / 3)
        XCTAssertLessThanOrEqual(most, UInt64(walkEnd - sos[0]), "held \(most) bytes")
        XCTAssertEqual(ic_incremental_buffered_bytes(inc), 0, "nothing held once the thumbnail is done")
        var image: UnsafeMutablePointer<ic_image>?
        let final = outcome(ic_incremental_finish(inc, &image, nil, &err), image, err)
        XCTAssertEqual(final.status, IC_OK)
        XCTAssertTrue(final.pixels == early, "the early thumbnail is the final one")
        assertSame(final, decode(jpeg, IC_JPEG_PATH_LIBJPEG, Box(width: 256, height: 256, mode: IC_RESIZE_FIT)), "streamed")
        print("streamed: \(jpeg.count) bytes, thumbnail complete after \(at), held at most \(most)")
    }

    /// Corrupted files (bytes flipped or dropped, markers planted, truncations) decode or fail
    /// exactly as through libjpeg, whole and incrementally.
    func testCorruptedFilesGetLibjpegsAnswer() throws {
        var rng = SplitMix(seed: 77)
        var bases: [[UInt8]] = []
        let px = SyntheticPhoto.rgba(width: 120, height: 90, seed: 3)
        for (_, scans) in Self.scripts {
            if let jpeg = encode(rgb(px), width: 120, height: 90, components: 3, sampling: [(2, 2)],
                                 restart: scans == nil ? 2 : 0, scans: scans) {
                bases.append(jpeg)
            }
        }
        var decodes = 0, failures = 0
        for base in bases {
            for _ in 0..<40 {
                var bytes = base
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let at = 2 + Int(rng.next() % UInt64(bytes.count - 2))
                    switch rng.next() % 5 {
                    case 0: bytes[at] ^= UInt8(1 << (rng.next() % 8))
                    case 1: bytes = Array(bytes[..<at])
                    case 2: if at + 1 < bytes.count { bytes[at] = 0xFF; bytes[at + 1] = UInt8(0xC0 + rng.next() % 64) }
                    case 3: bytes.removeSubrange(at..<min(bytes.count, at + 1 + Int(rng.next() % 12)))
                    default: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
                    }
                    if bytes.count < 4 { break }
                }
                let box = Box(width: 16, height: 12, mode: IC_RESIZE_STRETCH)
                let reference = decode(bytes, IC_JPEG_PATH_LIBJPEG, box)
                assertSame(decode(bytes, IC_JPEG_PATH_AUTO, box), reference, "corrupted")
                assertSame(decodeIncrementally(bytes, box, piece: 97), reference, "corrupted, incremental")
                decodes += 1
                if reference.status != IC_OK { failures += 1 }
            }
        }
        print("corrupted: \(decodes) files, \(failures) refused alike")
        XCTAssertGreaterThan(failures, 0)
    }

    /// The DC decoder's own limits: it needs far less memory than libjpeg's coefficient
    /// buffer (so a limit between the two lets it through), checks the cancel flag, and gives
    /// way (for libjpeg's answer) on what it does not take.
    func testMemoryLimitCancellationAndGivingWay() throws {
        let (w, h) = (2000, 1500)
        let jpeg = makeJPEG(SyntheticPhoto.rgba(width: w, height: h, seed: 12), width: w, height: h, progressive: true)
        let box = Box(width: 128, height: 128, mode: IC_RESIZE_FIT)
        // libjpeg's path holds 3 bytes a pixel of coefficients (4:2:0): 9 MB here.
        let limited = decode(jpeg, IC_JPEG_PATH_LIBJPEG, box, maxMemory: 4 << 20)
        XCTAssertEqual(limited.status, IC_ERR_LIMIT_EXCEEDED)
        let dc = decode(jpeg, IC_JPEG_PATH_AUTO, box, maxMemory: 4 << 20)
        XCTAssertEqual(dc.status, IC_OK, dc.message)
        assertSame(dc, decode(jpeg, IC_JPEG_PATH_LIBJPEG, box), "2000x1500")
        XCTAssertEqual(decode(jpeg, IC_JPEG_PATH_AUTO, box, cancelled: true).status, IC_ERR_CANCELLED)
        XCTAssertEqual(decode(jpeg, IC_JPEG_PATH_DC, box, cancelled: true).status, IC_ERR_CANCELLED)
        // Arithmetic coding and baseline files are libjpeg's.
        var settings = anchors_jpeg_settings(components: 3, ycck: 0, quality: 80, progressive: 1, arithmetic: 1,
                                             restart_rows: 0, h_samp: 2, v_samp: 2)
        let small = rgb(SyntheticPhoto.rgba(width: 160, height: 120, seed: 2))
        let arithmetic = try XCTUnwrap(anchorBytes { out, size in
            anchors_encode_jpeg_libjpeg(small, 160, 120, &settings, out, size)
        })
        let arithmeticBox = Box(width: 20, height: 15, mode: IC_RESIZE_STRETCH)
        XCTAssertEqual(decode(arithmetic, IC_JPEG_PATH_DC, arithmeticBox).status, IC_ERR_UNSUPPORTED_FEATURE)
        assertSame(decode(arithmetic, IC_JPEG_PATH_AUTO, arithmeticBox),
                   decode(arithmetic, IC_JPEG_PATH_LIBJPEG, arithmeticBox), "arithmetic")
        let baseline = makeJPEG(SyntheticPhoto.rgba(width: 160, height: 120, seed: 2), width: 160, height: 120)
        XCTAssertEqual(decode(baseline, IC_JPEG_PATH_DC, arithmeticBox).status, IC_ERR_UNSUPPORTED_FEATURE)
        // A file cut right after its DC scans: libjpeg's smoothing reads on for the next
        // marker and finds the end of the data; the DC decoder gives way and the answer is its.
        let scans = "0,1,2: 0-0, 0, 0; 0: 1-63, 0, 0; 1: 1-63, 0, 0; 2: 1-63, 0, 0;"
        let full = try XCTUnwrap(encode(small, width: 160, height: 120, components: 3, sampling: [(2, 2)], scans: scans))
        let sos = (2..<(full.count - 1)).filter { full[$0] == 0xFF && full[$0 + 1] == 0xDA }
        XCTAssertEqual(sos.count, 4)
        let cut = Array(full[..<sos[1]])
        assertSame(decode(cut, IC_JPEG_PATH_AUTO, arithmeticBox), decode(cut, IC_JPEG_PATH_LIBJPEG, arithmeticBox), "cut")
        XCTAssertEqual(decode(cut, IC_JPEG_PATH_DC, arithmeticBox).status, IC_ERR_UNSUPPORTED_FEATURE)
        // With an EOI there, the DC decoder takes it.
        let ended = cut + [0xFF, 0xD9]
        let endedDC = decode(ended, IC_JPEG_PATH_DC, arithmeticBox)
        XCTAssertEqual(endedDC.status, IC_OK, endedDC.message)
        assertSame(endedDC, decode(ended, IC_JPEG_PATH_LIBJPEG, arithmeticBox), "cut and ended")
    }
}
