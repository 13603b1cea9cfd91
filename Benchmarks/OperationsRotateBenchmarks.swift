import CAnchors
import ImageKit
import XCTest

/// Rotation by 30° with the canvas grown to fit (RotationTransformer, Catmull-Rom bicubic)
/// on a 12 MP photo and on a 256 px thumbnail of it, against `vips_rotate` on the same RGBA
/// pixels (its default bilinear interpolator, the same grown canvas). Each on one thread (the
/// target), and once with libvips on two threads.
final class OperationsRotateBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private func rotate(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(self, "rotate 30° (fit)", thumbnail: thumbnail, anchorName: "libvips vips_rotate",
                               threads: threads, ours: { _ = try RotationTransformer(angle: 30).transform($0) },
                               peer: { vipsImage, _ in anchors_vips_rotate(vipsImage, 30) })
    }

    func testRotate12MP() throws { try rotate(thumbnail: false) }
    func testRotateThumbnail() throws { try rotate(thumbnail: true) }
    func testRotate12MPThreaded() throws { try rotate(thumbnail: false, threads: 2) }
}
