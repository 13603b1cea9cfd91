import ImageKit
import XCTest

/// Tint (source-atop, as SDWebImage's SDImageTintTransformer) against a double-precision reference.
final class TintTests: XCTestCase {
    /// Source-atop of (color, opacity) over premultiplied samples: alpha kept,
    /// colour = tint · opacity · alpha + colour · (1 − opacity).
    private func reference(_ image: Image, frame: Int = 0, color: RGBColor, opacity: Double) -> [Double] {
        let src = ColorOpsCheck.samples(image, frame: frame)
        let tint = [Double(color.red), Double(color.green), Double(color.blue)]
        let ta = (opacity * 255).rounded() / 255
        var out = src
        for i in stride(from: 0, to: src.count, by: 4) {
            let a = src[i + 3] / 255
            for c in 0..<3 { out[i + c] = tint[c] * ta * a + src[i + c] * (1 - ta) }
        }
        return out
    }

    func testMatchesReferenceOnOpaqueAndTransparentImages() throws {
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(alpha: alpha)
            for (color, opacity) in [(RGBColor(red: 0, green: 122, blue: 255), 1.0), (.black, 0.3),
                                     (RGBColor(red: 250, green: 5, blue: 128), 0.66), (.white, 0)] {
                let out = try TintTransformer(color: color, opacity: opacity).transform(src)
                let error = ColorOpsCheck.maxError(out, reference: reference(src, color: color, opacity: opacity))
                XCTAssertLessThanOrEqual(error, 1, "\(color) at \(opacity), alpha \(alpha)")
                ColorOpsCheck.assertPremultiplied(out)
                XCTAssertEqual(out.isOpaque, !alpha)
            }
        }
    }

    func testOpaqueTintIsASilhouetteWithoutFringes() throws {
        let src = try ColorOpsCheck.photo(alpha: true)
        let out = try TintTransformer(color: RGBColor(red: 255, green: 128, blue: 0)).transform(src)
        let px = out.packedPixels(), before = src.packedPixels()
        for i in stride(from: 0, to: px.count, by: 4) {
            XCTAssertEqual(px[i + 3], before[i + 3], "alpha is kept")
            // Straight colour (255, 128, 0) at any alpha: red equals alpha, blue is 0.
            XCTAssertEqual(px[i], px[i + 3])
            XCTAssertEqual(px[i + 2], 0)
        }
    }

    func testEveryFrameOfAnAnimation() throws {
        try ColorOpsCheck.assertFramesAlike(TintTransformer(color: RGBColor(red: 20, green: 200, blue: 90), opacity: 0.5))
    }

    func testBadOpacityFails() throws {
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        for opacity in [-0.1, 1.5, .nan, .infinity] {
            XCTAssertThrowsError(try TintTransformer(color: .black, opacity: opacity).transform(src)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
            }
        }
    }

    func testKeysAreStableAndDistinct() {
        XCTAssertEqual(TintTransformer(color: RGBColor(red: 0, green: 122, blue: 255)).key, "tint(#007affff)")
        XCTAssertEqual(TintTransformer(color: .black, opacity: 0.5).key, "tint(#00000080)")
        XCTAssertEqual(TintTransformer(color: .black, opacity: 2).key, "tint(#000000,opacity=2.0)")
        ColorOpsCheck.assertDistinct([
            TintTransformer(color: .black).key, TintTransformer(color: .white).key,
            TintTransformer(color: .black, opacity: 0.5).key, TintTransformer(color: .black, opacity: 0).key,
            GrayscaleTransformer().key,
        ])
    }
}
