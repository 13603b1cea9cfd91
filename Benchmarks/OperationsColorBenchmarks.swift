import CAnchors
import ImageKit
import XCTest

/// The colour operations against libvips's nearest operation on a decoded 12 MP photo and on
/// its 256 px thumbnail (the pixels already in memory on both sides): both on one thread (the
/// target), and once with libvips on two threads.
final class OperationsColorBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    /// Rounded corners, radius 1/16 of the shorter side. libvips has no corner operation; the
    /// peer is what a libvips user writes: `vips_svgload_buffer` of a rounded rectangle the
    /// image's size, then `vips_composite2` in DEST_IN mode.
    private func corners(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(
            self, "round corners", thumbnail: thumbnail, anchorName: "libvips svgload_buffer + composite2 DEST_IN",
            threads: threads,
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
    private func adjust(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(
            self, "color adjust (brightness, contrast)", thumbnail: thumbnail, anchorName: "libvips vips_linear",
            threads: threads,
            ours: { image in _ = try ColorAdjustTransformer(brightness: 0.9, contrast: 0.8).transform(image) },
            peer: { vipsImage, _ in anchors_vips_linear(vipsImage, 0.72, 25.5) })
    }

    func testRoundCorners12MP() throws { try corners(thumbnail: false) }
    func testRoundCornersThumbnail() throws { try corners(thumbnail: true) }
    func testColorAdjust12MP() throws { try adjust(thumbnail: false) }
    func testColorAdjustThumbnail() throws { try adjust(thumbnail: true) }
    func testRoundCorners12MPThreaded() throws { try corners(thumbnail: false, threads: 2) }
    func testColorAdjust12MPThreaded() throws { try adjust(thumbnail: false, threads: 2) }
}
