import CAnchors
import CImageCore
import Foundation
import ImageKit
import XCTest

/// Colour management on a 12 MP Display P3 JPEG (the 12 MP baseline input with the P3
/// profile of Tests/Fixtures/color embedded): the full decode converted to sRGB against
/// bare tjDecompress2 + cmsDoTransform in the same process, its cost against our own raw
/// decode of the same bytes (target: colour management <= 10 % of the full decode), and the
/// 256 px thumbnail, converted and raw.
final class ColorBenchmarks: XCTestCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private static let profile: [UInt8] = {
        let url = BenchRecorder.packageRoot.appendingPathComponent("Tests/Fixtures/color/p3.jpg")
        guard let data = try? Data(contentsOf: url), let image = try? ImageDecoder().decode(data),
              let icc = image.iccProfile
        else { fatalError("Tests/Fixtures/color/p3.jpg has no readable profile") }
        return [UInt8](icc)
    }()

    /// The 12 MP input with the P3 profile in an APP2 segment after SOI.
    private static let input: BenchInputs.Input = {
        let plain = BenchInputs.jpeg12MP
        let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + profile
        let length = payload.count + 2
        let bytes = Array(plain.bytes[0..<2]) + [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
            + Array(plain.bytes[2...])
        return BenchInputs.Input(name: "jpeg-12mp-p3", bytes: bytes, width: plain.width, height: plain.height)
    }()

    func testFullDecodeP3() throws {
        let input = Self.input
        let converting = ImageDecoder()
        let raw = ImageDecoder(options: DecodeOptions(colorMode: .raw))
        XCTAssertTrue(try converting.decode(Data(input.bytes)).isColorConverted)
        let pixels = input.width * input.height
        let dst = UnsafeMutableRawBufferPointer.allocate(byteCount: pixels * 4, alignment: 64)
        dst.initializeMemory(as: UInt8.self, repeating: 0x55)
        defer { dst.deallocate() }
        let transform = try XCTUnwrap(Self.profile.withUnsafeBufferPointer {
            anchors_lcms_rgba_to_srgb($0.baseAddress!, $0.count)
        })
        defer { anchors_lcms_free(transform) }
        let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
        try input.bytes.withUnsafeBytes { bytes in
            let src = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            try BenchRecorder.compare(self, section: "colour", name: "12 MP P3 JPEG full decode to sRGB",
                                      megapixels: input.megapixels,
                                      anchorName: "tjDecompress2 RGBA + cmsDoTransform", target: nil,
                                      ours: { _ = try converting.decode(bytes) },
                                      anchor: {
                                          _ = anchors_tj_decompress_into(src, bytes.count, 1, out, dst.count)
                                          anchors_lcms_apply(transform, out, pixels)
                                      })
            try BenchRecorder.compare(self, section: "colour", name: "12 MP P3 JPEG: sRGB decode / raw decode",
                                      useMeasure: false, megapixels: input.megapixels,
                                      anchorName: "ours, ColorMode.raw", target: 1.10,
                                      ours: { _ = try converting.decode(bytes) },
                                      anchor: { _ = try raw.decode(bytes) })
            try BenchRecorder.compare(self, section: "colour", name: "12 MP: bare cmsDoTransform / bare tjDecompress2",
                                      useMeasure: false, megapixels: input.megapixels,
                                      anchorName: "tjDecompress2 RGBA", target: nil,
                                      ours: { anchors_lcms_apply(transform, out, pixels) },
                                      anchor: { _ = anchors_tj_decompress_into(src, bytes.count, 1, out, dst.count) })
        }
    }

    func testThumbnail256P3() throws {
        let input = Self.input
        let box = PixelSize(square: 256)
        let converting = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: box))
        let raw = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: box, colorMode: .raw))
        XCTAssertTrue(try converting.decode(Data(input.bytes)).isColorConverted)
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: "colour", name: "12 MP P3 JPEG 256 px thumbnail: sRGB / raw",
                                      megapixels: input.megapixels, anchorName: "ours, ColorMode.raw",
                                      target: 1.10,
                                      ours: { _ = try converting.decode(bytes) },
                                      anchor: { _ = try raw.decode(bytes) })
        }
    }
}
