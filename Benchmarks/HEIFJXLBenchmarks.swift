import CAnchors
import ImageKit
import XCTest

/// 12 MP HEIC and JPEG XL: ImageKit's full decode and 256 px thumbnail against the bare library
/// decode of the same bytes in the same process (libheif's heif_decode_image to interleaved
/// RGBA; libjxl's JxlDecoder with the whole input, RGBA8 into a buffer allocated and touched
/// once, no parallel runner). Neither library can shrink on load (libjxl 0.7's progressive DC
/// comes out upsampled to full size and costs more than the full decode: see decode/jxl.c), so
/// the thumbnail is the full decode plus ImageKit's resampling, and its ratio shows what that
/// costs; for HEIC, libheif hands over its YCbCr planes, box-averaged before the YUV to RGB
/// step (decode/yuv.c). Once ImageKit has decoded a HEIF in the process, libheif decodes HEVC
/// through ImageKit's decoder plugin (decode/heif/heif_hevc.c, registered process-wide), the anchor's
/// calls included: both sides then run the same libde265 decode (the plugin alone measured
/// 816–823 ms against libheif's own 842 ms on the 12 MP file, in a separate harness).
final class HEIFJXLBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private let thumbnail = DecodeOptions(thumbnailPixelSize: PixelSize(width: 256, height: 256))

    private func compare(_ input: BenchInputs.Input, name: String, options: DecodeOptions, anchorName: String,
                         anchor: @escaping (UnsafeRawBufferPointer) -> Void) throws {
        let decoder = ImageDecoder(options: options)
        try input.bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(self, section: options.thumbnailPixelSize == nil ? "decode" : "thumbnail 256 px",
                                      name: name, megapixels: input.megapixels, anchorName: anchorName,
                                      target: 1.05, ours: { _ = try decoder.decode(bytes) }, anchor: { anchor(bytes) })
        }
    }

    private func heic(_ options: DecodeOptions, name: String) throws {
        let input = BenchInputs.heic12MP
        try compare(input, name: name, options: options, anchorName: "libheif heif_decode_image RGBA") { bytes in
            _ = anchors_decode_heic(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    }

    private func jxl(_ options: DecodeOptions, name: String) throws {
        let input = BenchInputs.jxl12MP
        let dst = UnsafeMutableRawBufferPointer.allocate(byteCount: input.width * input.height * 4, alignment: 64)
        dst.initializeMemory(as: UInt8.self, repeating: 0x55)
        addTeardownBlock { dst.deallocate() }
        try compare(input, name: name, options: options, anchorName: "libjxl JxlDecoder RGBA8") { bytes in
            _ = anchors_decode_jxl_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                        dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
        }
    }

    func testHEIC12MPDecode() throws { try heic(DecodeOptions(), name: "heic-12mp") }

    func testHEIC12MPThumbnail256() throws { try heic(thumbnail, name: "heic-12mp-256") }

    /// PSNR of the HEIC thumbnail (YCbCr planes box-averaged) against libheif's RGBA full decode
    /// stretched to the same size by ImageResizer: the colours must agree (40 dB or more).
    func testHEIC12MPThumbnailQuality() throws {
        let input = BenchInputs.heic12MP
        let thumb = try ImageDecoder(options: thumbnail).decode(input.bytes)
        let reference = try ImageResizer(size: PixelSize(width: thumb.width, height: thumb.height), mode: .stretch)
            .resize(try ImageDecoder().decode(input.bytes))
        let a = thumb.packedPixels(), b = reference.packedPixels()
        var sum = 0.0
        for i in 0..<a.count {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
        }
        let psnr = 10 * log10(255 * 255 / (sum / Double(a.count)))
        XCTAssertGreaterThanOrEqual(psnr, 40)
        BenchRecorder.record(BenchResult(section: "thumbnail 256 px", name: "heic-12mp-256 quality: PSNR vs stretched RGBA decode (dB)",
                                         medianMs: 0, minMs: 0, ratio: psnr, target: 40, targetRelation: ">=",
                                         notes: ["psnr_db": psnr]))
    }

    func testJXL12MPDecode() throws { try jxl(DecodeOptions(), name: "jxl-12mp-lossy") }

    func testJXL12MPThumbnail256() throws { try jxl(thumbnail, name: "jxl-12mp-lossy-256") }

    /// The 256 px thumbnail with the helper thread (``DecodeOptions/usesHelperThread``, as the
    /// manager decodes a lone load): libjxl decodes on the calling thread as before, and the
    /// frame it hands over is resampled in two bands on two threads. Wall and process CPU time
    /// per decode, samples interleaved with the bare libjxl decode's.
    func testJXL12MPThumbnail256HelperThread() throws {
        let input = BenchInputs.jxl12MP
        let decoder = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 256, height: 256),
                                                          usesHelperThread: true))
        let dst = UnsafeMutableRawBufferPointer.allocate(byteCount: input.width * input.height * 4, alignment: 64)
        dst.initializeMemory(as: UInt8.self, repeating: 0x55)
        defer { dst.deallocate() }
        let bytes = input.bytes
        try bytes.withUnsafeBufferPointer { raw in
            let bare = {
                _ = anchors_decode_jxl_into(raw.baseAddress!, raw.count,
                                            dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
            }
            bare()
            _ = WallAndCPU.sample(decoder, bytes, threads: 1, loads: 1)
            try WallAndCPU.record(section: "thumbnail 256 px", name: "jxl-12mp-lossy-256 (helper thread)",
                                  megapixels: input.megapixels, samples: 9,
                                  anchor: ("libjxl JxlDecoder RGBA8", "libjxl"),
                                  ours: ("helper", { WallAndCPU.sample(decoder, bytes, threads: 1, loads: 2) }),
                                  theirs: { WallAndCPU.sample(loads: 2, bare) }, target: 1.05)
        }
    }
}
