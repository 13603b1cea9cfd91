import Foundation
import ImageKit
import XCTest

/// Rounded corners and circles against a double-precision reference of the same shape.
final class RoundCornerTests: XCTestCase {
    /// Coverage of the pixel centred on (px, py) by the rounded rectangle [x0, x1] x [y0, y1] with
    /// corner radii `radii` (top left, top right, bottom left, bottom right): 0.5 minus the signed
    /// distance to the edge, clamped to 0...1.
    private func coverage(_ px: Double, _ py: Double, _ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double,
                          _ radii: [Double]) -> Double {
        guard x1 > x0, y1 > y0 else { return 0 }
        let cx = (x0 + x1) / 2, cy = (y0 + y1) / 2, hx = (x1 - x0) / 2, hy = (y1 - y0) / 2
        let r = radii[(py < cy ? 0 : 2) + (px < cx ? 0 : 1)]
        let qx = abs(px - cx) - (hx - r), qy = abs(py - cy) - (hy - r)
        let d = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot() + min(max(qx, qy), 0) - r
        return min(max(0.5 - d, 0), 1)
    }

    /// The reference result: image * inner coverage + premultiplied border * (outer - inner).
    private func reference(_ image: Image, radius: Double, corners: RoundCornerTransformer.Corners,
                           borderWidth: Double, border: [Double]) -> [Double] {
        let w = Double(image.width), h = Double(image.height)
        let most = min(w, h) / 2, r = min(radius, most), bw = min(borderWidth, most)
        let bits: [RoundCornerTransformer.Corners] = [.topLeft, .topRight, .bottomLeft, .bottomRight]
        let outer = bits.map { corners.contains($0) ? r : 0 }
        let innerMost = max(min(w - 2 * bw, h - 2 * bw) / 2, 0)
        let inner = bits.map { corners.contains($0) ? min(max(r - bw, 0), innerMost) : 0 }
        let premultipliedBorder = [border[0] * border[3] / 255, border[1] * border[3] / 255, border[2] * border[3] / 255, border[3]]
        let src = ColorOpsCheck.samples(image)
        var out = [Double](repeating: 0, count: src.count)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let px = Double(x) + 0.5, py = Double(y) + 0.5
                let co = coverage(px, py, 0, 0, w, h, outer)
                let ci = bw > 0 ? coverage(px, py, bw, bw, w - bw, h - bw, inner) : co
                for c in 0..<4 {
                    let i = (y * image.width + x) * 4 + c
                    out[i] = src[i] * ci + premultipliedBorder[c] * (co - ci)
                }
            }
        }
        return out
    }

    func testMatchesReferenceOnOpaqueAndTransparentImages() throws {
        let cases: [(Double, RoundCornerTransformer.Corners, Double, RGBColor)] = [
            (12.5, .all, 0, .black),
            (20, [.topLeft, .bottomRight], 0, .black),
            (9.25, [.topRight, .bottomLeft, .bottomRight], 3.5, RGBColor(red: 200, green: 40, blue: 10)),
            (2, .all, 30, .white),
            (1000, .all, 0.5, RGBColor(red: 1, green: 2, blue: 3)),
            (0, .all, 4, RGBColor(red: 30, green: 200, blue: 90)),
        ]
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(alpha: alpha)
            for (radius, corners, width, color) in cases {
                let transformer = RoundCornerTransformer(radius: radius, corners: corners, borderWidth: width, borderColor: color)
                let out = try transformer.transform(src)
                let ref = reference(src, radius: radius, corners: corners, borderWidth: width,
                                    border: [Double(color.red), Double(color.green), Double(color.blue), 255])
                let error = ColorOpsCheck.maxError(out, reference: ref)
                XCTAssertLessThanOrEqual(error, 1, "\(transformer.key), alpha \(alpha)")
                ColorOpsCheck.assertPremultiplied(out)
                XCTAssertEqual(out.isOpaque, radius == 0 && !alpha, transformer.key)
            }
        }
    }

    func testCornersAreTransparentAndEdgesHaveNoDarkFringe() throws {
        let white = try Image(width: 40, height: 30, premultipliedRGBA: [UInt8](repeating: 255, count: 40 * 30 * 4))
        let out = try RoundCornerTransformer(radius: 10, corners: [.topLeft]).transform(white)
        let px = out.packedPixels()
        XCTAssertEqual(Array(px[0..<4]), [0, 0, 0, 0], "the top-left corner is cut away")
        XCTAssertEqual(Array(px[(40 - 1) * 4..<40 * 4]), [255, 255, 255, 255], "the top-right corner is kept")
        XCTAssertFalse(out.isOpaque)
        var partial = 0
        for i in stride(from: 0, to: px.count, by: 4) where px[i + 3] > 0 && px[i + 3] < 255 {
            partial += 1
            XCTAssertEqual(px[i], px[i + 3], "an anti-aliased edge pixel of a white image stays white, not grey")
        }
        XCTAssertGreaterThan(partial, 5, "the edge is anti-aliased")
    }

    func testCircleKeepsTheCentredSquare() throws {
        let src = try ColorOpsCheck.photo(width: 60, height: 40, alpha: false)
        let circle = RoundCornerTransformer.circle(borderWidth: 2, borderColor: .white)
        let out = try circle.transform(src)
        XCTAssertEqual([out.width, out.height], [40, 40])
        let square = try ImageResizer.crop(src, to: PixelRect(x: 10, y: 0, width: 40, height: 40))
        let ref = reference(square, radius: 20, corners: .all, borderWidth: 2, border: [255, 255, 255, 255])
        XCTAssertLessThanOrEqual(ColorOpsCheck.maxError(out, reference: ref), 1)
        let px = out.packedPixels()
        XCTAssertEqual(px[3], 0, "outside the circle")
        XCTAssertEqual(Array(px[(20 * 40 + 20) * 4..<(20 * 40 + 21) * 4]), Array(square.packedPixels()[(20 * 40 + 20) * 4..<(20 * 40 + 21) * 4]))
    }

    func testEveryFrameOfAnAnimation() throws {
        try ColorOpsCheck.assertFramesAlike(RoundCornerTransformer(radius: 6, borderWidth: 1.5, borderColor: .white))
        try ColorOpsCheck.assertFramesAlike(RoundCornerTransformer.circle())
    }

    func testBadParametersFail() throws {
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        for transformer in [
            RoundCornerTransformer(radius: -1), RoundCornerTransformer(radius: .nan),
            RoundCornerTransformer(radius: 3, borderWidth: -2), RoundCornerTransformer(radius: .infinity),
            RoundCornerTransformer(radius: 3, corners: RoundCornerTransformer.Corners(rawValue: 16)),
        ] {
            XCTAssertThrowsError(try transformer.transform(src), transformer.key) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("round corners:") ?? false, "\(error)")
            }
        }
    }

    func testKeysAreStableAndDistinct() {
        XCTAssertEqual(RoundCornerTransformer(radius: 12).key, "round(12.0,all)")
        XCTAssertEqual(RoundCornerTransformer(radius: 12.5, corners: [.topLeft, .bottomRight], borderWidth: 2,
                                              borderColor: RGBColor(red: 255, green: 0, blue: 16)).key,
                       "round(12.5,tl+br,border=2.0,#ff0010)")
        XCTAssertEqual(RoundCornerTransformer.circle().key, "circle()")
        XCTAssertEqual(RoundCornerTransformer.circle(borderWidth: 1, borderColor: .white).key, "circle(border=1.0,#ffffff)")
        XCTAssertEqual(RoundCornerTransformer(radius: -0.0).key, RoundCornerTransformer(radius: 0).key)
        XCTAssertEqual(RoundCornerTransformer(radius: 3), RoundCornerTransformer(radius: 3, corners: .all))
        ColorOpsCheck.assertDistinct([
            RoundCornerTransformer(radius: 12).key, RoundCornerTransformer(radius: 12.5).key,
            RoundCornerTransformer(radius: 12, corners: .topLeft).key, RoundCornerTransformer(radius: 12, corners: []).key,
            RoundCornerTransformer(radius: 12, borderWidth: 1).key,
            RoundCornerTransformer(radius: 12, borderWidth: 1, borderColor: .white).key,
            RoundCornerTransformer.circle().key, RoundCornerTransformer.circle(borderWidth: 1).key,
        ])
    }
}
