import CAnchors
import Foundation
import ImageKit
import XCTest

/// The colour operations against libvips's nearest operation, both on one thread, on a decoded
/// 12 MP photo and on its 256 px thumbnail (the pixels already in memory on both sides).
final class OperationsColorBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    /// The 12 MP baseline JPEG decoded whole, or to a 256 px thumbnail.
    private func photo(thumbnail: Bool) throws -> Image {
        let options = thumbnail ? DecodeOptions(thumbnailPixelSize: PixelSize(square: 256)) : DecodeOptions()
        return try ImageDecoder(options: options).decode(BenchInputs.jpeg12MP.bytes)
    }

    /// Records one row: `ours` on `image` against `peer` on the same pixels wrapped by libvips.
    private func row(_ name: String, thumbnail: Bool, anchorName: String, ours: (Image) throws -> Void,
                     peer: (UnsafeMutableRawPointer, Image) -> Int32) throws {
        let image = try photo(thumbnail: thumbnail)
        let pixels = image.packedPixels()
        try pixels.withUnsafeBufferPointer { buffer in
            guard let vipsImage = anchors_vips_image_rgba(buffer.baseAddress, Int32(image.width), Int32(image.height),
                                                          image.width * 4) else {
                let why = anchors_vips_start().map { String(cString: $0) } ?? "libvips refused the pixels"
                throw VipsPeer.Missing(description: "peer missing: " + why)
            }
            defer { anchors_vips_image_free(vipsImage) }
            try BenchRecorder.compare(
                self, section: "operations", name: "\(name), \(thumbnail ? "256 px" : "12 MP")",
                megapixels: Double(image.width * image.height) / 1e6, anchorName: anchorName, target: 1.0,
                ours: { try ours(image) },
                anchor: {
                    guard peer(vipsImage, image) == 0 else { throw VipsPeer.Missing(description: "libvips failed: \(anchorName)") }
                })
        }
    }

    /// Rounded corners, radius 1/16 of the shorter side. libvips has no corner operation; the
    /// peer is what a libvips user writes: `vips_svgload_buffer` of a rounded rectangle the
    /// image's size, then `vips_composite2` in DEST_IN mode.
    private func corners(thumbnail: Bool) throws {
        try row("round corners", thumbnail: thumbnail, anchorName: "libvips svgload_buffer + composite2 DEST_IN (1 thread)",
                ours: { image in
                    _ = try RoundCornerTransformer(radius: Double(min(image.width, image.height)) / 16).transform(image)
                },
                peer: { vipsImage, image in
                    anchors_vips_round_corners(vipsImage, Int32(image.width), Int32(image.height),
                                               Double(min(image.width, image.height)) / 16)
                })
    }

    /// Brightness 0.9 and contrast 0.8 (saturation 1: its step still runs). The peer is
    /// `vips_linear` with a = 0.72, b = 25.5 on the colours, uchar output: the same mapping
    /// while nothing clips.
    private func adjust(thumbnail: Bool) throws {
        try row("color adjust (brightness, contrast)", thumbnail: thumbnail, anchorName: "libvips vips_linear (1 thread)",
                ours: { image in _ = try ColorAdjustTransformer(brightness: 0.9, contrast: 0.8).transform(image) },
                peer: { vipsImage, _ in anchors_vips_linear(vipsImage, 0.72, 25.5) })
    }

    func testRoundCorners12MP() throws { try corners(thumbnail: false) }
    func testRoundCornersThumbnail() throws { try corners(thumbnail: true) }
    func testColorAdjust12MP() throws { try adjust(thumbnail: false) }
    func testColorAdjustThumbnail() throws { try adjust(thumbnail: true) }
}
