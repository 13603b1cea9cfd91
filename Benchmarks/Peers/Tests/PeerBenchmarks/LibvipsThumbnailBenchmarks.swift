import CVips
import Foundation
import ImageKit
import XCTest

/// Thumbnails to 256 px: ImageKit against libvips' `vips_thumbnail_buffer` (the
/// peer users pick; operation cache off, concurrency 1) on the same bytes in the
/// same process. Inputs are `make bench`'s built-in files.
final class LibvipsThumbnailBenchmarks: XCTestCase {
    private static let started: Bool = ik_vips_start() == 0

    private var inputs: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/bench-inputs")
    }

    /// `toSRGB`: libvips converts through the embedded profile (`export_profile=srgb`), as
    /// ImageKit does for a tagged image.
    private func compare(_ file: String, megapixels: Double, target: Double?, helperThread: Bool = false,
                         toSRGB: Bool = false) throws {
        XCTAssertTrue(Self.started, "libvips did not start")
        let url = inputs.appendingPathComponent(file)
        guard let data = try? Data(contentsOf: url) else {
            return XCTFail("\(url.path) is missing: run `make bench` first (it makes the inputs)")
        }
        let bytes = [UInt8](data)
        let decoder = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256),
                                                          usesHelperThread: helperThread))
        let name = file + (helperThread ? " (helper thread)" : "") + (toSRGB ? " to sRGB" : "")
        let anchorName = "libvips vips_thumbnail_buffer" + (toSRGB ? " export_profile=srgb" : "")
        let vips = toSRGB ? ik_vips_thumbnail_srgb : ik_vips_thumbnail
        try bytes.withUnsafeBytes { raw in
            try BenchRecorder.compare(self, section: "thumbnail 256 px (peers)", name: name, megapixels: megapixels,
                                      anchorName: anchorName, target: target,
                                      ours: { _ = try decoder.decode(raw) },
                                      anchor: { XCTAssertEqual(vips(raw.baseAddress, raw.count, 256), 0) })
        }
    }

    func testJPEG12MP() throws { try compare("jpeg-12mp-baseline.jpg", megapixels: 12, target: 0.9) }

    func testJPEG24MP() throws { try compare("jpeg-24mp-baseline.jpg", megapixels: 24, target: 0.9) }

    /// The colour benchmarks' 12 MP Display P3 JPEG (ColorBenchmarks, BenchInputs.jpeg12MPP3),
    /// both converting to sRGB.
    func testJPEG12MPP3ToSRGB() throws {
        try compare("jpeg-12mp-p3.jpg", megapixels: 12, target: 0.9, toSRGB: true)
    }

    func testJPEG12MPProgressive() throws { try compare("jpeg-12mp-progressive.jpg", megapixels: 12, target: nil) }

    /// PNG thumbnails: the performance issue's target is 0.7 × libvips (libdeflate fast path).
    func testPNG8MP() throws { try compare("png-8mp-rgb.png", megapixels: 8, target: 0.7) }

    func testPNG8MPRGBA() throws { try compare("png-8mp-rgba.png", megapixels: 8, target: 0.7) }

    func testWebP12MP() throws { try compare("webp-12mp-lossy.webp", megapixels: 12, target: nil) }

    /// libvips turns on libwebp's helper thread; so does ImageKit for a lone load.
    func testWebP12MPHelperThread() throws {
        try compare("webp-12mp-lossy.webp", megapixels: 12, target: 1.0, helperThread: true)
    }

    /// The performance issue's 23.6 MP lossy WebP (BenchInputs.webpLossy24MP), on one thread.
    func testWebP24MP() throws { try compare("webp-23.6mp-lossy.webp", megapixels: 23.6, target: 1.0) }

    /// The same with libwebp's helper thread, as the manager decodes a lone load.
    func testWebP24MPHelperThread() throws {
        try compare("webp-23.6mp-lossy.webp", megapixels: 23.6, target: 1.0, helperThread: true)
    }

    /// The performance issue's 16.8 MP WebP (BenchInputs.webpLossless17MP: lossless with alpha),
    /// on one thread.
    func testWebP17MPLossless() throws { try compare("webp-16.8mp-lossless.webp", megapixels: 16.8, target: 1.0) }

    /// The same with the helper thread asked for, as the manager decodes a lone load (libwebp
    /// uses it for lossy images only; ImageKit resamples half the output rows on it).
    func testWebP17MPLosslessHelperThread() throws {
        try compare("webp-16.8mp-lossless.webp", megapixels: 16.8, target: 1.0, helperThread: true)
    }

    /// The 12 MP AVIF of AVIFBenchmarks (avif-12mp-q60); libvips reads it through libheif.
    func testAVIF12MP() throws { try compare("avif-12mp-q60.avif", megapixels: 12, target: 1.0) }

    /// The 12 MP HEIC of HEIFJXLBenchmarks (BenchInputs.heic12MP); libvips reads it through libheif.
    func testHEIC12MP() throws { try compare("heic-12mp-rgb.heic", megapixels: 12, target: 1.0) }

    /// The 12 MP JPEG XL of HEIFJXLBenchmarks (BenchInputs.jxl12MP); libvips 8.14 reads it with libjxl.
    func testJXL12MP() throws { try compare("jxl-12mp-lossy.jxl", megapixels: 12, target: 1.0) }
}
