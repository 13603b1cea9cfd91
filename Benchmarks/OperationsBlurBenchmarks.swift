import CAnchors
import Foundation
import ImageKit
import XCTest

/// Blur and sharpen (BlurTransformer, SharpenTransformer) on a 12 MP photo and on a 256 px
/// thumbnail of it, against the same libvips operation on the same RGBA pixels, both on one
/// thread: `vips_gaussblur` (its integer mask, cut at 20 % of the peak) and `vips_sharpen`
/// (imgproxy's `sharpen:%sigma`: L* of CIELAB, libvips's default curve).
final class OperationsBlurBenchmarks: BenchmarkCase {
    private static let section = "operations"

    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    /// The 12 MP benchmark photo decoded whole, or its 256 px thumbnail.
    private func photo(thumbnail: Bool) throws -> (image: Image, name: String) {
        let input = BenchInputs.jpeg12MP
        if thumbnail {
            let image = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256))).decode(input.bytes)
            return (image, "\(image.width)x\(image.height) thumbnail")
        }
        return (try ImageDecoder().decode(input.bytes), "12 MP (\(input.width)x\(input.height))")
    }

    private func row(_ label: String, thumbnail: Bool, anchorName: String, ours transformer: some ImageTransformer,
                     vips: @escaping (UnsafeMutableRawPointer) -> Int32) throws {
        let (image, size) = try photo(thumbnail: thumbnail)
        let pixels = image.packedPixels()
        try pixels.withUnsafeBufferPointer { packed in
            guard let vipsImage = anchors_vips_image_rgba(packed.baseAddress, Int32(image.width), Int32(image.height),
                                                          image.width * 4) else {
                let why = anchors_vips_start().map { String(cString: $0) } ?? "libvips refused the pixels"
                throw VipsPeer.Missing(description: "peer missing: " + why)
            }
            defer { anchors_vips_image_free(vipsImage) }
            try BenchRecorder.compare(
                self, section: Self.section, name: "\(label), \(size)",
                megapixels: Double(image.width * image.height) / 1e6,
                anchorName: anchorName, target: 1.0,
                ours: { _ = try transformer.transform(image) },
                anchor: {
                    guard vips(vipsImage) == 0 else { throw VipsPeer.Missing(description: "libvips failed: \(anchorName)") }
                })
        }
    }

    func testBlur12MP() throws {
        try row("blur sigma 2", thumbnail: false, anchorName: "libvips vips_gaussblur, 1 thread",
                ours: BlurTransformer(sigma: 2)) { anchors_vips_gaussblur($0, 2) }
    }

    func testBlurThumbnail() throws {
        try row("blur sigma 2", thumbnail: true, anchorName: "libvips vips_gaussblur, 1 thread",
                ours: BlurTransformer(sigma: 2)) { anchors_vips_gaussblur($0, 2) }
    }

    func testSharpen12MP() throws {
        try row("sharpen sigma 1, amount 1, threshold 2", thumbnail: false, anchorName: "libvips vips_sharpen, 1 thread",
                ours: SharpenTransformer(sigma: 1, amount: 1, threshold: 2)) { anchors_vips_sharpen($0, 1) }
    }

    func testSharpenThumbnail() throws {
        try row("sharpen sigma 1, amount 1, threshold 2", thumbnail: true, anchorName: "libvips vips_sharpen, 1 thread",
                ours: SharpenTransformer(sigma: 1, amount: 1, threshold: 2)) { anchors_vips_sharpen($0, 1) }
    }
}
