import CImageCore
import Foundation
import ImageKit
import XCTest

/// The fixtures of one format directory under Tests/Fixtures and their `references.json`
/// (written by scripts/heifjxl_references.py), and the checks HEIFDecodeTests and
/// JXLDecodeTests share.
struct FixtureReferences {
    struct Reference: Decodable {
        var width: Int
        var height: Int
        var sha256: String
        var compare: String
        var frames: Int?
        var delays_ms: [Int]?
        var loop_count: Int?
        var psnr_min: Double?
        var reference_png: String?
    }

    private struct File: Decodable {
        var files: [String: Reference]
    }

    let directory: URL
    let files: [String: Reference]

    init(_ name: String) throws {
        directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
        let data = try Data(contentsOf: directory.appendingPathComponent("references.json"))
        files = try JSONDecoder().decode(File.self, from: data).files
    }

    func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// SHA-256 of every frame's tightly packed premultiplied pixels, one after another.
    static func sha256(_ image: Image) -> String {
        var ctx = ic_sha256()
        ic_sha256_init(&ctx)
        for f in 0..<image.frameCount {
            let pixels = image.packedPixels(frame: f)
            pixels.withUnsafeBytes { ic_sha256_update(&ctx, $0.baseAddress!, $0.count) }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        ic_sha256_final(&ctx, &digest)
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Decodes every fixture with all frames and checks it against its reference: the hash, or
    /// the PSNR against the reference PNG (decoded by ImageKit's PNG decoder). Returns how many
    /// files were compared exactly and by PSNR.
    func checkAll(file: StaticString = #filePath, line: UInt = #line) throws -> (exact: Int, psnr: Int) {
        var exact = 0, psnr = 0
        for (name, ref) in files.sorted(by: { $0.key < $1.key }) {
            let image = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(try bytes(name))
            XCTAssertEqual(image.width, ref.width, name, file: file, line: line)
            XCTAssertEqual(image.height, ref.height, name, file: file, line: line)
            XCTAssertEqual(image.frameCount, ref.frames ?? 1, name, file: file, line: line)
            if let delays = ref.delays_ms { XCTAssertEqual(image.frameDelays, delays, name, file: file, line: line) }
            if let loops = ref.loop_count { XCTAssertEqual(image.loopCount, loops, name, file: file, line: line) }
            if ref.compare == "exact" {
                XCTAssertEqual(Self.sha256(image), ref.sha256, name, file: file, line: line)
                exact += 1
            } else {
                let png = try bytes(XCTUnwrap(ref.reference_png))
                let reference = try ImageDecoder(options: DecodeOptions(colorMode: .raw)).decode(png)
                let db = Quality.psnr(image, reference)
                XCTAssertGreaterThanOrEqual(db, try XCTUnwrap(ref.psnr_min), name, file: file, line: line)
                psnr += 1
            }
        }
        return (exact, psnr)
    }

    /// `pixels` (w x h, tightly packed RGBA) as displayed under EXIF orientation `o`.
    static func oriented(_ pixels: [UInt8], width w: Int, height h: Int, orientation o: Int) -> [UInt8] {
        let dw = o >= 5 ? h : w, dh = o >= 5 ? w : h
        var out = [UInt8](repeating: 0, count: pixels.count)
        for dy in 0..<dh {
            for dx in 0..<dw {
                let (sx, sy): (Int, Int)
                switch o {
                case 2: (sx, sy) = (w - 1 - dx, dy)
                case 3: (sx, sy) = (w - 1 - dx, h - 1 - dy)
                case 4: (sx, sy) = (dx, h - 1 - dy)
                case 5: (sx, sy) = (dy, dx)
                case 6: (sx, sy) = (dy, h - 1 - dx)
                case 7: (sx, sy) = (w - 1 - dy, h - 1 - dx)
                case 8: (sx, sy) = (w - 1 - dy, dx)
                default: (sx, sy) = (dx, dy)
                }
                let s = (sy * w + sx) * 4, d = (dy * dw + dx) * 4
                out[d..<d + 4] = pixels[s..<s + 4]
            }
        }
        return out
    }

    /// Decodes through the C core with the cancel flag at `cancelFlag` (1: cancelled before
    /// the start); returns the status and message.
    static func decodeThroughC(_ data: [UInt8], cancelFlag: Int32, thumbnail: UInt32 = 0) -> (ic_status, String) {
        var cancel = cancelFlag
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.thumbnail_width = thumbnail
        options.thumbnail_height = thumbnail
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = withUnsafePointer(to: &cancel) { flag in
            options.cancel_flag = flag
            return ic_decode(data, data.count, &options, &out, nil, &err)
        }
        XCTAssertEqual(st == IC_OK, out != nil)
        ic_image_free(out)
        let message = withUnsafeBytes(of: err.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return (st, message)
    }

    /// The error a decode of `bytes` fails with, or a test failure when it succeeds.
    static func failure(_ bytes: [UInt8], _ options: DecodeOptions = DecodeOptions(),
                        file: StaticString = #filePath, line: UInt = #line) -> ImageKitError? {
        do {
            _ = try ImageDecoder(options: options).decode(bytes)
            XCTFail("decoded, but should fail", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }
}
