import Foundation
import ImageKit
import XCTest

/// Rotation by any angle against a double-precision reference of its definition
/// (ic_op_rotate.h), against `vips rotate`, and the quarter turns' exact path.
final class RotationTests: XCTestCase {
    /// Catmull-Rom (a = -0.5) weights of taps -1, 0, 1, 2 at fraction `t`.
    private func cubic(_ t: Double) -> [Double] {
        let t2 = t * t, t3 = t2 * t
        return [(-t3 + 2 * t2 - t) / 2, (3 * t3 - 5 * t2 + 2) / 2, (-3 * t3 + 4 * t2 + t) / 2, (t3 - t2) / 2]
    }

    /// The canvas the definition gives: the source size, or the rotated box rounded up.
    private func canvas(width: Int, height: Int, degrees: Double, fit: Bool) -> (Int, Int) {
        guard fit else { return (width, height) }
        let c = abs(cos(degrees * .pi / 180)), s = abs(sin(degrees * .pi / 180))
        let w = Double(width), h = Double(height)
        return (max(1, Int((w * c + h * s - 1e-6).rounded(.up))), max(1, Int((w * s + h * c - 1e-6).rounded(.up))))
    }

    /// The rotation in Double: each output pixel centre mapped back into the source extended
    /// with `background`, Catmull-Rom on premultiplied samples, colour clamped to 0…alpha.
    private func reference(_ image: Image, frame: Int = 0, degrees: Double, fit: Bool,
                           background: [Double]) -> (width: Int, height: Int, samples: [Double]) {
        let src = ColorOpsCheck.samples(image, frame: frame), w = image.width, h = image.height
        let (ow, oh) = canvas(width: w, height: h, degrees: degrees, fit: fit)
        let c = cos(degrees * .pi / 180), s = sin(degrees * .pi / 180)
        func sample(_ x: Int, _ y: Int, _ k: Int) -> Double {
            x >= 0 && x < w && y >= 0 && y < h ? src[(y * w + x) * 4 + k] : background[k]
        }
        var out = [Double](repeating: 0, count: ow * oh * 4)
        for y in 0..<oh {
            for x in 0..<ow {
                let dx = Double(x) + 0.5 - Double(ow) / 2, dy = Double(y) + 0.5 - Double(oh) / 2
                let u = dx * c + dy * s + Double(w) / 2 - 0.5, v = -dx * s + dy * c + Double(h) / 2 - 0.5
                let ix = Int(u.rounded(.down)), iy = Int(v.rounded(.down))
                let wx = cubic(u - Double(ix)), wy = cubic(v - Double(iy))
                var px = [0.0, 0.0, 0.0, 0.0]
                for j in 0..<4 {
                    for i in 0..<4 {
                        for k in 0..<4 { px[k] += wx[i] * wy[j] * sample(ix - 1 + i, iy - 1 + j, k) }
                    }
                }
                px[3] = min(255, max(0, px[3]))
                for k in 0..<3 { px[k] = min(px[3], max(0, px[k])) }
                for k in 0..<4 { out[(y * ow + x) * 4 + k] = px[k] }
            }
        }
        return (ow, oh, out)
    }

    func testMatchesReferenceOnOpaqueAndTransparentImages() throws {
        let cases: [(Double, Bool, Background)] = [
            (30, true, .transparent), (12.5, false, .transparent), (-100, true, .color(RGBColor(red: 255, green: 0, blue: 0))),
            (200.3, true, .color(RGBColor(red: 10, green: 20, blue: 30))), (45, false, .transparent), (90, false, .transparent),
            (0.2, true, .transparent),
        ]
        for alpha in [false, true] {
            let src = try ColorOpsCheck.photo(width: 61, height: 47, alpha: alpha)
            for (degrees, fit, background) in cases {
                let out = try RotationTransformer(angle: degrees, fitSize: fit, background: background).transform(src)
                let ref = reference(src, degrees: degrees, fit: fit, background: background.premultipliedSamples)
                XCTAssertEqual(out.width, ref.width, "\(degrees)")
                XCTAssertEqual(out.height, ref.height, "\(degrees)")
                let psnr = GaussianReference.psnr(out.packedPixels(), ref.samples)
                XCTAssertGreaterThanOrEqual(psnr, 45, "\(degrees)° fit \(fit) alpha \(alpha)")
                XCTAssertLessThanOrEqual(ColorOpsCheck.maxError(out, reference: ref.samples), 1, "\(degrees)° alpha \(alpha)")
                ColorOpsCheck.assertPremultiplied(out)
            }
        }
    }

    /// A white picture on transparent: every edge pixel is white at some coverage (colour equal
    /// to alpha when premultiplied), never a darker grey.
    func testEdgesHaveNoDarkFringe() throws {
        let white = try Image(width: 40, height: 30, premultipliedRGBA: [UInt8](repeating: 255, count: 40 * 30 * 4))
        for degrees in [17.0, 45, 123.4] {
            let px = try RotationTransformer(angle: degrees).transform(white).packedPixels()
            let partial = stride(from: 0, to: px.count, by: 4).filter { px[$0 + 3] > 0 && px[$0 + 3] < 255 }
            XCTAssertFalse(partial.isEmpty, "the edge is anti-aliased")
            for i in partial { XCTAssertEqual([px[i], px[i + 1], px[i + 2]], [px[i + 3], px[i + 3], px[i + 3]], "\(degrees)°") }
        }
    }

    func testCanvasGeometry() throws {
        let src = try ColorOpsCheck.photo(width: 60, height: 20, alpha: false)
        for degrees in [1.0, 30, 45, 89.9, 135, 270.5, -60] {
            let grown = try RotationTransformer(angle: degrees).transform(src)
            let (w, h) = canvas(width: 60, height: 20, degrees: degrees, fit: true)
            XCTAssertEqual([grown.width, grown.height], [w, h], "\(degrees)°")
            let kept = try RotationTransformer(angle: degrees, fitSize: false).transform(src)
            XCTAssertEqual([kept.width, kept.height], [60, 20], "\(degrees)°")
        }
        let diagonal = try RotationTransformer(angle: 45).transform(src)
        XCTAssertEqual([diagonal.width, diagonal.height], [57, 57]) // 80 / √2 = 56.57
    }

    func testBackgroundColourOrTransparent() throws {
        let src = try ColorOpsCheck.photo(width: 50, height: 40, alpha: false)
        let red = try RotationTransformer(angle: 30, background: .color(RGBColor(red: 255, green: 0, blue: 0))).transform(src)
        XCTAssertTrue(red.isOpaque)
        XCTAssertEqual(Array(red.packedPixels()[0..<4]), [255, 0, 0, 255])
        let clear = try RotationTransformer(angle: 30).transform(src)
        XCTAssertFalse(clear.isOpaque)
        XCTAssertEqual(Array(clear.packedPixels()[0..<4]), [0, 0, 0, 0])
        let cut = try RotationTransformer(angle: 30, fitSize: false, background: .color(RGBColor(red: 0, green: 0, blue: 255)))
            .transform(src)
        XCTAssertTrue(cut.isOpaque)
        XCTAssertEqual(Array(cut.packedPixels()[0..<4]), [0, 0, 255, 255])
    }

    /// Against `vips rotate` on a real photo. Both turn clockwise about the centre; libvips
    /// samples bilinearly by default (we use Catmull-Rom), rounds its canvas to 271x243 where
    /// ours is ceil'd to 272x243, and places the image half a pixel up and left of ours
    /// (`--odx 0.5 --ody 0.5` moves it onto ours). Compared where our output is fully covered
    /// (two pixels in from the edge, where the backgrounds and edge filters differ).
    func testAgainstLibvips() throws {
        let photo = try VipsCommand.photo()
        for degrees in [30.0, 12.5] {
            let vips = try VipsCommand.run("rotate", on: photo, arguments: ["\(degrees)", "--odx", "0.5", "--ody", "0.5"])
            let ours = try RotationTransformer(angle: degrees).transform(photo)
            let a = ours.packedPixels(), b = vips.packedPixels()
            let w = min(ours.width, vips.width), h = min(ours.height, vips.height)
            var sum = 0.0, n = 0
            for y in 2..<(h - 2) {
                for x in 2..<(w - 2) {
                    let covered = (-2...2).allSatisfy { dy in
                        (-2...2).allSatisfy { dx in a[((y + dy) * ours.width + x + dx) * 4 + 3] == 255 }
                    }
                    guard covered else { continue }
                    for k in 0..<3 {
                        let d = Double(a[(y * ours.width + x) * 4 + k]) - Double(b[(y * vips.width + x) * 4 + k])
                        sum += d * d
                    }
                    n += 3
                }
            }
            let psnr = 10 * log10(255 * 255 / (sum / Double(n)))
            print("rotate \(degrees)° vs vips rotate: \(String(format: "%.2f", psnr)) dB over \(n / 3) pixels")
            XCTAssertGreaterThan(n, 3 * photo.width * photo.height / 2)
            XCTAssertGreaterThanOrEqual(psnr, 35, "\(degrees)°")
        }
    }

    func testQuarterTurnsStayExactAndKeyedAsBefore() throws {
        let src = try ColorOpsCheck.photo(width: 7, height: 5, alpha: true)
        for (degrees, turns) in [(90.0, 1), (-90, 3), (180, 2), (450, 1), (0, 0), (-360, 0)] {
            let rotation = RotationTransformer(angle: degrees)
            XCTAssertEqual(rotation, RotationTransformer(quarterTurns: turns))
            XCTAssertEqual(rotation.key, "rotate(\(turns * 90))")
            XCTAssertTrue(rotation.isExact)
            XCTAssertEqual(try rotation.transform(src).packedPixels(),
                           try RotationTransformer(quarterTurns: turns).transform(src).packedPixels())
        }
        XCTAssertEqual(RotationTransformer(angle: 180, fitSize: false).key, "rotate(180)")
        XCTAssertEqual(RotationTransformer(quarterTurns: 1).key, "rotate(90)")
        // A quarter turn that keeps a non-square canvas is resampled, and keyed apart.
        let kept = RotationTransformer(angle: 90, fitSize: false)
        XCTAssertEqual(kept.key, "rotate(90.0,crop,transparent)")
        let out = try kept.transform(src)
        XCTAssertEqual([out.width, out.height], [7, 5])
        // On a square one it moves the pixels exactly.
        let square = try ColorOpsCheck.photo(width: 6, height: 6, alpha: true)
        XCTAssertEqual(try kept.transform(square).packedPixels(),
                       try RotationTransformer(quarterTurns: 1).transform(square).packedPixels())
    }

    func testEveryFrameOfAnAnimation() throws {
        try ColorOpsCheck.assertFramesAlike(RotationTransformer(angle: 33))
        try ColorOpsCheck.assertFramesAlike(RotationTransformer(angle: -20, fitSize: false,
                                                                background: .color(RGBColor(red: 0, green: 128, blue: 0))))
    }

    func testCanvasOverTheLimitIsRefused() throws {
        let src = try ColorOpsCheck.photo(width: 40, height: 30, alpha: false)
        let limits = DecodeLimits(maxPixels: 1500)
        XCTAssertThrowsError(try RotationTransformer(angle: 45, limits: limits).transform(src)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .limitExceeded)
            XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("rotate: the rotated canvas 50x50") ?? false, "\(error)")
        }
        XCTAssertNoThrow(try RotationTransformer(angle: 45, fitSize: false, limits: limits).transform(src))
        let memory = DecodeLimits(maxMemoryBytes: 8000)
        XCTAssertThrowsError(try RotationTransformer(angle: 45, limits: memory).transform(src)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .limitExceeded)
            XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("rotate: the rotated frames need 10000 bytes") ?? false,
                          "\(error)")
        }
        XCTAssertNoThrow(try RotationTransformer(angle: 45, fitSize: false, limits: memory).transform(src))
    }

    func testNonFiniteAnglesFail() throws {
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        for angle in [Double.nan, .infinity, -.infinity] {
            XCTAssertThrowsError(try RotationTransformer(angle: angle).transform(src)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("rotate: the angle") ?? false, "\(error)")
            }
        }
    }

    func testCancellation() throws {
        let src = try ColorOpsCheck.photo(width: 64, height: 64, alpha: true)
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        XCTAssertThrowsError(try RotationTransformer(angle: 10).transform(src, cancellation: cancellation)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .cancelled)
        }
        XCTAssertNoThrow(try RotationTransformer(angle: 10).transform(src, cancellation: DecodeCancellation()))
    }

    func testKeysAreStableAndDistinct() {
        XCTAssertEqual(RotationTransformer(angle: 12.5).key, "rotate(12.5,fit,transparent)")
        XCTAssertEqual(RotationTransformer(angle: -330, fitSize: false, background: .color(RGBColor(red: 255, green: 0, blue: 0))).key,
                       "rotate(30.0,crop,#ff0000)")
        XCTAssertEqual(RotationTransformer(angle: 372.5), RotationTransformer(angle: 12.5))
        ColorOpsCheck.assertDistinct([
            RotationTransformer(angle: 12.5).key, RotationTransformer(angle: 12.5, fitSize: false).key,
            RotationTransformer(angle: 12.5, background: .color(RGBColor(red: 1, green: 2, blue: 3))).key,
            RotationTransformer(angle: 12.6).key, RotationTransformer(angle: 90).key, RotationTransformer(angle: 90, fitSize: false).key,
        ])
    }
}

private extension Background {
    /// The premultiplied background as the reference takes it.
    var premultipliedSamples: [Double] {
        switch self {
        case .transparent: [0, 0, 0, 0]
        case .color(let c): [Double(c.red), Double(c.green), Double(c.blue), 255]
        }
    }
}
