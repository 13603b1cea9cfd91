import CAnchors
import ImageKit
import XCTest

/// Blur and sharpen (BlurTransformer, SharpenTransformer) on a 12 MP photo and on a 256 px
/// thumbnail of it, against the same libvips operation on the same RGBA pixels:
/// `vips_gaussblur` (its integer mask, cut at 20 % of the peak) and `vips_sharpen`
/// (imgproxy's `sharpen:%sigma`: L* of CIELAB, libvips's default curve). Each on one thread
/// (the target), and once with libvips on two threads.
final class OperationsBlurBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private func blur(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(self, "blur sigma 2", thumbnail: thumbnail, anchorName: "libvips vips_gaussblur",
                               threads: threads, ours: { _ = try BlurTransformer(sigma: 2).transform($0) },
                               peer: { vipsImage, _ in anchors_vips_gaussblur(vipsImage, 2) })
    }

    private func sharpen(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(
            self, "sharpen sigma 1, amount 1, threshold 2", thumbnail: thumbnail, anchorName: "libvips vips_sharpen",
            threads: threads, ours: { _ = try SharpenTransformer(sigma: 1, amount: 1, threshold: 2).transform($0) },
            peer: { vipsImage, _ in anchors_vips_sharpen(vipsImage, 1) })
    }

    func testBlur12MP() throws { try blur(thumbnail: false) }
    func testBlurThumbnail() throws { try blur(thumbnail: true) }
    func testBlur12MPThreaded() throws { try blur(thumbnail: false, threads: 2) }
    func testSharpen12MP() throws { try sharpen(thumbnail: false) }
    func testSharpenThumbnail() throws { try sharpen(thumbnail: true) }
    func testSharpen12MPThreaded() throws { try sharpen(thumbnail: false, threads: 2) }
}
