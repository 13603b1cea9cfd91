import CAnchors
import ImageKit
import ImageKitTestSupport
import XCTest

/// Overlay (OverlayTransformer) of a mark with soft transparency at 50 % opacity on a 12 MP
/// photo (a 256 px mark) and on a 256 px thumbnail of it (a 64 px mark), south-east 10 px from
/// the corner, once and tiled 64 px apart; against libvips as a user draws a watermark: the
/// mark's alpha halved (`vips_linear`), then `vips_composite2` in OVER mode at the same place
/// (tiled: `vips_embed` + `vips_replicate` + `vips_extract_area` first). Each on one thread
/// (the target), and the 12 MP one with libvips on two threads.
final class OperationsOverlayBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private func overlay(thumbnail: Bool, tile: Int? = nil, threads: Int = 1) throws {
        let side = thumbnail ? 64 : 256
        let straight = SyntheticPhoto.rgba(width: side, height: side, seed: 5, alpha: true)
        let mark = try Image(width: side, height: side, frames: [straight], premultiplied: false)
        let transformer = OverlayTransformer(mark: mark, markKey: "bench", offset: (x: 10, y: 10), opacity: 0.5, tile: tile)
        let base = try OperationBench.photo(thumbnail: thumbnail)
        let x = base.width - side - 10, y = base.height - side - 10
        let name = "overlay \(side) px mark, 50 %" + (tile.map { ", tiled \($0) px apart" } ?? "")
        try straight.withUnsafeBufferPointer { buffer in
            guard let vipsMark = anchors_vips_image_rgba(buffer.baseAddress, Int32(side), Int32(side), side * 4) else {
                throw VipsPeer.Missing(description: "peer missing: libvips refused the mark")
            }
            defer { anchors_vips_image_free(vipsMark) }
            try OperationBench.row(
                self, name, thumbnail: thumbnail, anchorName: "libvips vips_composite2", threads: threads,
                ours: { _ = try transformer.transform($0) },
                peer: { vipsImage, image in
                    anchors_vips_overlay(vipsImage, Int32(image.width), Int32(image.height), vipsMark, Int32(side),
                                         Int32(side), 0.5, Int32(x), Int32(y), Int32(tile ?? -1))
                })
        }
    }

    func testOverlay12MP() throws { try overlay(thumbnail: false) }
    func testOverlayThumbnail() throws { try overlay(thumbnail: true) }
    func testOverlay12MPThreaded() throws { try overlay(thumbnail: false, threads: 2) }
    func testOverlayTiled12MP() throws { try overlay(thumbnail: false, tile: 64) }
    func testOverlayTiledThumbnail() throws { try overlay(thumbnail: true, tile: 16) }
}
