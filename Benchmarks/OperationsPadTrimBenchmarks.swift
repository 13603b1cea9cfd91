import CAnchors
import ImageKit
import XCTest

/// Padding and trim (PaddingTransformer, TrimTransformer) on a 12 MP photo and on a 256 px
/// thumbnail of it, against libvips on the same RGBA pixels: 10 % of white added on each side
/// (`vips_embed` with `VIPS_EXTEND_BACKGROUND`), and that white border trimmed off again
/// (`vips_find_trim` then `vips_crop` to its box, as a libvips user trims; libvips flattens the
/// alpha band and median-filters first). Each on one thread (the target), and once with libvips
/// on two threads.
final class OperationsPadTrimBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    /// 10 % of the width on the left and right, of the height on the top and bottom.
    private static func margins(_ image: Image) -> (x: Int, y: Int) { (image.width / 10, image.height / 10) }

    /// The transformer adding 10 % of white on each side of `image`.
    private static func padding(_ image: Image) -> PaddingTransformer {
        let (x, y) = margins(image)
        return PaddingTransformer(top: y, right: x, bottom: y, left: x, background: .color(.white))
    }

    private func pad(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(
            self, "pad 10 % each side, white", thumbnail: thumbnail, anchorName: "libvips vips_embed", threads: threads,
            ours: { _ = try Self.padding($0).transform($0) },
            peer: { vipsImage, image in
                let (x, y) = Self.margins(image)
                return anchors_vips_embed(vipsImage, Int32(x), Int32(y), Int32(image.width + 2 * x),
                                          Int32(image.height + 2 * y), [255, 255, 255, 255], 4)
            })
    }

    private func trim(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(
            self, "trim a 10 % white border, threshold 10", thumbnail: thumbnail,
            anchorName: "libvips vips_find_trim + vips_crop", threads: threads,
            input: { try Self.padding($0).transform($0) },
            ours: { _ = try TrimTransformer(threshold: 10, background: .white).transform($0) },
            peer: { vipsImage, _ in anchors_vips_trim(vipsImage, 10, [255, 255, 255], 3) })
    }

    func testPad12MP() throws { try pad(thumbnail: false) }
    func testPadThumbnail() throws { try pad(thumbnail: true) }
    func testPad12MPThreaded() throws { try pad(thumbnail: false, threads: 2) }
    func testTrim12MP() throws { try trim(thumbnail: false) }
    func testTrimThumbnail() throws { try trim(thumbnail: true) }
    func testTrim12MPThreaded() throws { try trim(thumbnail: false, threads: 2) }
}
