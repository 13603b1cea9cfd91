import CImageCore
import Foundation
import ImageKit
import XCTest

/// BlurTransformer (ic_blur) against the Double reference and libvips: opaque and
/// transparent pictures, premultiplied edges, animations, bad sigmas and keys.
final class BlurTests: XCTestCase {
    private func image(_ px: [UInt8], _ width: Int, _ height: Int) throws -> Image {
        try Image(width: width, height: height, premultipliedRGBA: px)
    }

    func testMatchesTheDoubleReference() throws {
        let (w, h) = (96, 64)
        for alpha in [false, true] {
            let px = GaussianReference.picture(width: w, height: h, alpha: alpha)
            for sigma in [0.5, 1.5, 4, 12, 40] {
                let out = try BlurTransformer(sigma: sigma).transform(try image(px, w, h)).packedPixels()
                let ref = GaussianReference.blur(px, width: w, height: h, sigma: sigma)
                let psnr = GaussianReference.psnr(out, ref)
                XCTAssertGreaterThanOrEqual(psnr, 45, "sigma \(sigma), alpha \(alpha)")
                XCTAssertLessThanOrEqual(GaussianReference.maxDifference(out, ref), 1, "sigma \(sigma), alpha \(alpha)")
            }
        }
    }

    func testATinySigmaLeavesTheImageAlone() throws {
        let px = GaussianReference.picture(width: 20, height: 10, alpha: true)
        XCTAssertEqual(try BlurTransformer(sigma: 0.3).transform(try image(px, 20, 10)).packedPixels(), px)
    }

    func testOpacityAndPremultipliedEdges() throws {
        // An opaque mid-grey disc on a transparent background: blurred, every pixel keeps
        // the disc's colour for its alpha (no dark fringe from the transparent black).
        let (w, h) = (64, 48)
        var px = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w where (x - 32) * (x - 32) + (y - 24) * (y - 24) < 15 * 15 {
                px.replaceSubrange((y * w + x) * 4..<(y * w + x) * 4 + 4, with: [128, 128, 128, 255])
            }
        }
        let out = try BlurTransformer(sigma: 3).transform(try image(px, w, h))
        XCTAssertFalse(out.isOpaque)
        let o = out.packedPixels()
        for i in stride(from: 0, to: o.count, by: 4) {
            let a = Double(o[i + 3])
            for c in 0..<3 {
                XCTAssertLessThanOrEqual(o[i + c], o[i + 3])
                XCTAssertEqual(Double(o[i + c]), a * 128 / 255, accuracy: 1.01, "pixel \(i / 4)")
            }
        }
        let opaque = GaussianReference.picture(width: w, height: h, alpha: false)
        XCTAssertTrue(try BlurTransformer(sigma: 7).transform(try image(opaque, w, h)).isOpaque)
    }

    func testEveryFrameOfAnAnimation() throws {
        let (w, h) = (40, 30)
        let frames = (0..<3).map { GaussianReference.picture(width: w, height: h, alpha: $0 == 1, seed: $0 * 50) }
        let anim = try Image(width: w, height: h, frames: frames, delaysMilliseconds: [40, 70, 100], loopCount: 3)
        let out = try BlurTransformer(sigma: 2).transform(anim)
        XCTAssertEqual(out.frameCount, 3)
        XCTAssertEqual(out.frameDelays, [40, 70, 100])
        XCTAssertEqual(out.loopCount, 3)
        for (f, frame) in frames.enumerated() {
            let alone = try BlurTransformer(sigma: 2).transform(try image(frame, w, h)).packedPixels()
            XCTAssertEqual(out.packedPixels(frame: f), alone, "frame \(f)")
        }
    }

    func testBadSigmas() throws {
        let img = try image(GaussianReference.picture(width: 8, height: 8, alpha: false), 8, 8)
        let sigmas: [Double] = [0, -1, .nan, .infinity, 100.5]
        for sigma in sigmas {
            XCTAssertThrowsError(try BlurTransformer(sigma: sigma).transform(img), "sigma \(sigma)") { error in
                let e = error as? ImageKitError
                XCTAssertEqual(e?.code, .invalidArgument)
                XCTAssertTrue(e?.message.contains("sigma") ?? false, "\(error)")
            }
        }
        XCTAssertNoThrow(try BlurTransformer(sigma: 100).transform(img))
    }

    /// The C calls stop with IC_ERR_CANCELLED when their flag is set, and return nothing.
    func testCancellationFlag() throws {
        var src: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        XCTAssertEqual(ic_image_create(64, 48, 2, &src, &err), IC_OK)
        let image = try XCTUnwrap(src)
        defer { ic_image_free(image) }
        memset(image.pointee.pixels, 0, ic_image_byte_count(image))
        image.pointee.is_opaque = 0
        for cancelled: Int32 in [1, 0] {
            var flag = cancelled
            var blurred: UnsafeMutablePointer<ic_image>?, sharpened: UnsafeMutablePointer<ic_image>?
            let blur = ic_blur(image, 2, &flag, &blurred, &err)
            let sharpen = ic_sharpen(image, 2, 1, 0, &flag, &sharpened, &err)
            XCTAssertEqual(blur, cancelled == 1 ? IC_ERR_CANCELLED : IC_OK)
            XCTAssertEqual(sharpen, cancelled == 1 ? IC_ERR_CANCELLED : IC_OK)
            XCTAssertEqual(blurred == nil, cancelled == 1)
            XCTAssertEqual(sharpened == nil, cancelled == 1)
            ic_image_free(blurred)
            ic_image_free(sharpened)
        }
    }

    func testKeys() {
        XCTAssertEqual(BlurTransformer(sigma: 2).key, "blur(2.0)")
        XCTAssertEqual(BlurTransformer(sigma: 0.5).key, "blur(0.5)")
        XCTAssertEqual(BlurTransformer(sigma: 2).key, BlurTransformer(sigma: 2.0).key)
        XCTAssertNotEqual(BlurTransformer(sigma: 2).key, BlurTransformer(sigma: 2.5).key)
        XCTAssertEqual(PipelineTransformer([BlurTransformer(sigma: 1.5), RotationTransformer(quarterTurns: 1)]).key,
                       "blur(1.5)|rotate(90)")
    }

    /// Against `vips gaussblur` on a real photo. libvips cuts its integer mask where the
    /// Gaussian falls below 20 % of its peak (radius ≈ 1.8σ, weights rounded to 1/20 of the
    /// peak); ours at 1 % (≈ 3σ) in 16-bit fixed point, so they differ most at large sigmas.
    func testAgainstLibvips() throws {
        let photo = try VipsCommand.photo()
        for sigma in [1.0, 2.0, 5.0] {
            let vips = try VipsCommand.run("gaussblur", on: photo, arguments: ["\(sigma)"])
            let ours = try BlurTransformer(sigma: sigma).transform(photo)
            let psnr = VipsCommand.colourPSNR(ours, vips)
            print("blur sigma \(sigma) vs vips gaussblur: \(String(format: "%.2f", psnr)) dB")
            XCTAssertGreaterThanOrEqual(psnr, 35, "sigma \(sigma)")
        }
    }
}
