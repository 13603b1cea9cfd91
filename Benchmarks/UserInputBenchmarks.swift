import CAnchors
import Foundation
import ImageKit
import XCTest

/// `make bench INPUT=dir`: the decode and thumbnail sections over a user's own
/// files, each against the bare library call of its format on the same bytes.
final class UserInputBenchmarks: BenchmarkCase {
    func testUserFiles() throws {
        guard let directory = BenchInputs.userDirectory else {
            throw XCTSkip("no INPUT directory given (make bench INPUT=dir)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        var measured = 0
        for name in files {
            let url = directory.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url), let info = try? ImageDecoder.info(data), info.format.isDecodable
            else {
                print("[bench] skipping \(name): not a JPEG, PNG, GIF or WebP file")
                continue
            }
            let bytes = [UInt8](data)
            let megapixels = Double(info.width * info.height) / 1e6
            let dst = UnsafeMutableRawBufferPointer.allocate(byteCount: info.width * info.height * 4 + 4096, alignment: 64)
            dst.initializeMemory(as: UInt8.self, repeating: 0x55)
            defer { dst.deallocate() }
            let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
            try bytes.withUnsafeBytes { raw in
                let input = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let anchor: (name: String, full: () -> Void, thumb: (() -> Void)?)
                switch info.format {
                case .jpeg:
                    anchor = ("tjDecompress2 RGBA",
                              { _ = anchors_tj_decompress_into(input, raw.count, 1, out, dst.count) },
                              { _ = anchors_tj_decompress_into(input, raw.count, 8, out, dst.count) })
                case .png:
                    anchor = ("libpng simplified RGBA", { _ = anchors_png_decode_into(input, raw.count, out, dst.count) }, nil)
                case .webp:
                    anchor = ("WebPDecodeRGBAInto", { _ = anchors_webp_decode_into(input, raw.count, out, dst.count) }, nil)
                default:
                    anchor = ("DGifSlurp", { _ = anchors_decode_gif(input, raw.count) }, nil)
                }
                let full = ImageDecoder()
                try BenchRecorder.compare(self, section: "decode (INPUT)", name: name, useMeasure: measured == 0, megapixels: megapixels,
                                          anchorName: anchor.name, target: nil,
                                          ours: { _ = try full.decode(raw) }, anchor: anchor.full)
                let thumb = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256)))
                try BenchRecorder.compare(self, section: "thumbnail 256 px (INPUT)", name: name, useMeasure: false, megapixels: megapixels,
                                          anchorName: anchor.thumb == nil ? anchor.name + " (full)" : anchor.name + " 1/8",
                                          target: nil, ours: { _ = try thumb.decode(raw) },
                                          anchor: anchor.thumb ?? anchor.full)
            }
            measured += 1
        }
        XCTAssertGreaterThan(measured, 0, "no decodable image in \(directory.path)")
    }
}
