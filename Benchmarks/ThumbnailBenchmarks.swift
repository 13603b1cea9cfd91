import CAnchors
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// Thumbnails to 256 px: ours (bytes in memory to the final bitmap) against the
/// bare library's fastest decode of the same bytes, with libvips's thumbnail (the peer a
/// service would use instead) beside them, all in the same process.
final class ThumbnailBenchmarks: BenchmarkCase {
    private let box = PixelSize(square: 256)

    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private var decoder: ImageDecoder { ImageDecoder(options: DecodeOptions(thumbnailPixelSize: box)) }

    /// A destination buffer allocated and touched once, reused by the anchor.
    private func touched(_ bytes: Int) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 0x55)
        addTeardownBlock { buffer.deallocate() }
        return buffer
    }

    private func jpeg(_ input: BenchInputs.Input, target: Double?) throws {
        let dst = touched(input.width * input.height * 4 / 64 + 4096)
        let decoder = self.decoder
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(
                self, section: "thumbnail 256 px", name: input.name, megapixels: input.megapixels,
                anchorName: "tjDecompress2 1/8 scale", target: target,
                peerName: VipsPeer.name, peer: try VipsPeer.thumbnail(bytes, size: box.width),
                ours: { _ = try decoder.decode(bytes) },
                anchor: {
                    _ = anchors_tj_decompress_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, 8,
                                                   dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
                })
        }
    }

    func testJPEG12MPBaseline() throws { try jpeg(BenchInputs.jpeg12MP, target: 1.10) }

    func testJPEG24MPBaseline() throws { try jpeg(BenchInputs.jpeg24MP, target: 1.10) }

    /// Progressive files gain little from DCT scaling in libjpeg-turbo; ours stops after the DC scans.
    func testJPEG12MPProgressive() throws { try jpeg(BenchInputs.jpeg12MPProgressive, target: nil) }

    private func fullDecodeAnchor(_ input: BenchInputs.Input, anchorName: String,
                                  decodeInto: @escaping (UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) -> Void) throws {
        let dst = touched(input.width * input.height * 4)
        let decoder = self.decoder
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: "thumbnail 256 px", name: input.name, megapixels: input.megapixels,
                                      anchorName: anchorName, target: nil,
                                      peerName: VipsPeer.name, peer: try VipsPeer.thumbnail(bytes, size: box.width),
                                      ours: { _ = try decoder.decode(bytes) }, anchor: { decodeInto(bytes, dst) })
        }
    }

    func testPNG8MPRGB() throws {
        try fullDecodeAnchor(BenchInputs.png8MPRGB, anchorName: "libpng full decode") { bytes, dst in
            _ = anchors_png_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                        dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testPNG8MPRGBA() throws {
        try fullDecodeAnchor(BenchInputs.png8MPRGBA, anchorName: "libpng full decode") { bytes, dst in
            _ = anchors_png_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                        dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testWebPLossy() throws {
        try fullDecodeAnchor(BenchInputs.webpLossy, anchorName: "WebPDecodeRGBAInto full") { bytes, dst in
            _ = anchors_webp_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                         dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testGIFFirstFrame() throws {
        let input = BenchInputs.gifAnimated
        let decoder = self.decoder
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: "thumbnail 256 px", name: input.name + " (first frame)",
                                      megapixels: input.megapixels, anchorName: "DGifSlurp (all frames, no compositing)",
                                      target: nil, ours: { _ = try decoder.decode(bytes) },
                                      anchor: { _ = anchors_decode_gif(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count) })
        }
    }

    /// PSNR of our 256 px thumbnail against a Lanczos-3 resize of our own full decode.
    func testQualityAgainstFullDecodeLanczos() throws {
        let input = BenchInputs.jpeg12MP
        let thumb = try decoder.decode(input.bytes)
        let reference = try ImageResizer(size: box).resize(try ImageDecoder().decode(input.bytes))
        let a = thumb.packedPixels(), b = reference.packedPixels()
        var sum = 0.0
        for i in 0..<a.count where i % 4 != 3 {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
        }
        let psnr = 10 * log10(255 * 255 / (sum / Double(a.count / 4 * 3)))
        BenchRecorder.record(BenchResult(section: "thumbnail 256 px", name: "quality: PSNR vs Lanczos-3 of full decode (dB)",
                                         medianMs: 0, minMs: 0, ratio: psnr, target: 35, targetRelation: ">=",
                                         notes: ["psnr_db": psnr]))
    }
}
