import CImageCore
import CImageCore.Testing
@testable import ImageKit
import ImageKitTestSupport
import XCTest

/// A resize split into bands of output rows — by the helper thread of
/// ``ImageResizer/usesHelperThread``, or by the testing hook on the calling thread —
/// gives the pixels of the same resize run whole, for every mode, ratio and alpha.
final class ResizeHelperThreadTests: XCTestCase {
    private func image(_ w: Int, _ h: Int, alpha: Bool, seed: UInt64 = 3) throws -> Image {
        try Image(width: w, height: h,
                  premultipliedRGBA: Pixels.premultiplied(SyntheticPhoto.rgba(width: w, height: h, seed: seed, alpha: alpha)))
    }

    /// Boxes exercising each filter path: area then Lanczos on both axes, Lanczos alone,
    /// a reduction by one pixel, enlargement, and one axis reduced while the other grows.
    private static let boxes: [(PixelSize, ImageResizer.Mode)] = [
        (PixelSize(square: 64), .fit), (PixelSize(width: 300, height: 0), .fit), (PixelSize(width: 0, height: 119), .fit),
        (PixelSize(width: 90, height: 170), .fill), (PixelSize(width: 500, height: 37), .stretch),
        (PixelSize(width: 260, height: 0), .fit), (PixelSize(width: 33, height: 400), .stretch),
    ]

    private func banded(_ src: Image, _ box: PixelSize, _ mode: ImageResizer.Mode, bands: UInt32) throws -> Image {
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let cMode: ic_resize_mode = switch mode {
        case .fit: IC_RESIZE_FIT
        case .fill: IC_RESIZE_FILL
        case .stretch: IC_RESIZE_STRETCH
        }
        let st = withExtendedLifetime(src) {
            ic_resize_in_bands(src.raw, UInt32(box.width), UInt32(box.height), cMode, 1, bands, &out, &err)
        }
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        return Image(taking: out)
    }

    func testBandsGiveTheWholeFramePixels() throws {
        for alpha in [false, true] {
            let src = try image(261, 120, alpha: alpha)
            for (box, mode) in Self.boxes {
                let whole = try ImageResizer(size: box, mode: mode).resize(src)
                for bands: UInt32 in [1, 2, 3, 7, UInt32(whole.height), 100_000] {
                    let split = try banded(src, box, mode, bands: bands)
                    XCTAssertEqual([split.width, split.height], [whole.width, whole.height])
                    XCTAssertEqual(split.isOpaque, whole.isOpaque)
                    XCTAssertTrue(split.packedPixels() == whole.packedPixels(),
                                  "\(box) \(mode), alpha \(alpha), \(bands) bands")
                }
            }
        }
    }

    func testHelperThreadGivesTheSamePixels() throws {
        // Over a million input pixels, so the helper thread is used.
        for alpha in [false, true] {
            let src = try image(1400, 800, alpha: alpha, seed: alpha ? 5 : 6)
            for (box, mode) in [(PixelSize(square: 256), ImageResizer.Mode.fit), (PixelSize(width: 1300, height: 0), .fit),
                                (PixelSize(width: 700, height: 700), .fill), (PixelSize(width: 2100, height: 900), .stretch)] {
                let one = try ImageResizer(size: box, mode: mode).resize(src)
                let two = try ImageResizer(size: box, mode: mode, usesHelperThread: true).resize(src)
                XCTAssertEqual([two.width, two.height], [one.width, one.height])
                XCTAssertEqual(two.isOpaque, one.isOpaque)
                XCTAssertTrue(two.packedPixels() == one.packedPixels(), "\(box) \(mode), alpha \(alpha)")
            }
        }
    }

    func testBandCountOfZeroIsRefused() throws {
        let src = try image(40, 30, alpha: false)
        XCTAssertThrowsError(try banded(src, PixelSize(square: 20), .fit, bands: 0)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
        }
    }
}
