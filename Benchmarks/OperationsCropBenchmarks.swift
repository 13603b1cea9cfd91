import CAnchors
import ImageKit
import XCTest

/// Smart crop (CroppingTransformer with `.smart`, ic_attention_window) to a square of half the
/// shorter side on a 12 MP photo and on a 256 px thumbnail of it, against libvips's
/// `vips_smartcrop` with `VIPS_INTERESTING_ATTENTION` on the same RGBA pixels (one thread, the
/// target, and once with libvips on two); and a 256 px `.fill` thumbnail through the whole
/// decode path with gravity `.smart` against the same with `.center` (target ≤ 1.10×).
final class OperationsCropBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private func smartCrop(thumbnail: Bool, threads: Int = 1) throws {
        try OperationBench.row(
            self, "smart crop to half the shorter side", thumbnail: thumbnail,
            anchorName: "libvips vips_smartcrop attention", threads: threads,
            ours: { image in
                let side = min(image.width, image.height) / 2
                _ = try CroppingTransformer(size: PixelSize(square: side), gravity: .smart).transform(image)
            },
            peer: { vipsImage, image in
                let side = Int32(min(image.width, image.height) / 2)
                return anchors_vips_smartcrop(vipsImage, side, side)
            })
    }

    func testSmartCrop12MP() throws { try smartCrop(thumbnail: false) }
    func testSmartCropThumbnail() throws { try smartCrop(thumbnail: true) }
    func testSmartCrop12MPThreaded() throws { try smartCrop(thumbnail: false, threads: 2) }

    /// The whole decode of a 256 px `.fill` thumbnail from the 12 MP JPEG: smart (resample to
    /// cover, attention, cut) against the centre (the window cut in the source).
    func testThumbnailFillSmartVsCentre() throws {
        let bytes = BenchInputs.jpeg12MP.bytes
        func decoder(_ gravity: Gravity) -> ImageDecoder {
            ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256), thumbnailMode: .fill,
                                                thumbnailGravity: gravity))
        }
        let smart = decoder(.smart), centre = decoder(.center)
        try BenchRecorder.compare(
            self, section: "operations", name: "thumbnail 256 px fill, smart vs centre, 12 MP",
            megapixels: 12, anchorName: "ImageKit centre crop", target: 1.10,
            ours: { _ = try smart.decode(bytes) }, anchor: { _ = try centre.decode(bytes) })
    }
}
