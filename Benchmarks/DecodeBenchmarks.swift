import CAnchors
import ImageKit
import XCTest

/// Full decodes, ours against the bare library call on the same bytes in the
/// same process. The anchor decodes into a buffer allocated and touched once
/// (as ../shared/anchors/bench.c does); ours returns a new Image every time.
final class DecodeBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private func compare(_ input: BenchInputs.Input, anchorName: String, target: Double?,
                         anchor: @escaping (UnsafeRawBufferPointer) -> Void) throws {
        let decoder = ImageDecoder()
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: "decode", name: input.name, megapixels: input.megapixels,
                                      anchorName: anchorName, target: target,
                                      ours: { _ = try decoder.decode(bytes) }, anchor: { anchor(bytes) })
        }
    }

    /// A destination buffer allocated and touched once, reused by the anchor.
    private func touched(_ bytes: Int) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 0x55)
        addTeardownBlock { buffer.deallocate() }
        return buffer
    }

    private func jpeg(_ input: BenchInputs.Input) throws {
        let dst = touched(input.width * input.height * 4)
        try compare(input, anchorName: "tjDecompress2 RGBA", target: 1.05) { bytes in
            _ = anchors_tj_decompress_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, 1,
                                           dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testJPEG12MPBaseline() throws { try jpeg(BenchInputs.jpeg12MP) }

    func testJPEG12MPProgressive() throws { try jpeg(BenchInputs.jpeg12MPProgressive) }

    func testJPEG24MPBaseline() throws { try jpeg(BenchInputs.jpeg24MP) }

    private func png(_ input: BenchInputs.Input) throws {
        let dst = touched(input.width * input.height * 4)
        try compare(input, anchorName: "libpng simplified RGBA", target: 0.70) { bytes in
            _ = anchors_png_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                        dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testPNG8MPRGB() throws { try png(BenchInputs.png8MPRGB) }

    func testPNG8MPRGBA() throws { try png(BenchInputs.png8MPRGBA) }

    private func webp(_ input: BenchInputs.Input) throws {
        let dst = touched(input.width * input.height * 4)
        try compare(input, anchorName: "WebPDecodeRGBAInto", target: nil) { bytes in
            _ = anchors_webp_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                         dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testWebPLossy() throws { try webp(BenchInputs.webpLossy) }

    func testWebPLossless() throws { try webp(BenchInputs.webpLossless) }

    func testGIFAnimatedAllFrames() throws {
        let input = BenchInputs.gifAnimated
        let decoder = ImageDecoder(options: DecodeOptions(firstFrameOnly: false))
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: "decode", name: input.name + " (all frames)",
                                      megapixels: input.megapixels * 8, anchorName: "DGifSlurp (no compositing)",
                                      target: nil, ours: { _ = try decoder.decode(bytes) },
                                      anchor: { _ = anchors_decode_gif(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count) })
        }
    }

    func testAPNGAllFrames() throws {
        let input = BenchInputs.apngAnimated
        let decoder = ImageDecoder(options: DecodeOptions(firstFrameOnly: false))
        let dst = touched(input.width * input.height * 4)
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: "decode", name: input.name + " (all frames)",
                                      megapixels: input.megapixels * 8,
                                      anchorName: "libpng simplified RGBA, IDAT frame x8 (no compositing)",
                                      target: nil, ours: { _ = try decoder.decode(bytes) },
                                      anchor: {
                                          for _ in 0..<8 {
                                              _ = anchors_png_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                                          bytes.count,
                                                                          dst.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                                          dst.count)
                                          }
                                      })
        }
    }
}
