import ImageKit
import ImageKitTestSupport
import XCTest

final class ResizeAndEncodeTests: XCTestCase {
    private func image(_ w: Int, _ h: Int, alpha: Bool, seed: UInt64 = 1) throws -> Image {
        try Image(width: w, height: h, premultipliedRGBA: Pixels.premultiplied(SyntheticPhoto.rgba(width: w, height: h, seed: seed, alpha: alpha)))
    }

    func testResizeModes() throws {
        let src = try image(300, 200, alpha: true)
        let fit = try ImageResizer(size: PixelSize(width: 100, height: 100), mode: .fit).resize(src)
        XCTAssertEqual([fit.width, fit.height], [100, 67])
        let fill = try ImageResizer(size: PixelSize(width: 100, height: 100), mode: .fill).resize(src)
        XCTAssertEqual([fill.width, fill.height], [100, 100])
        let stretch = try ImageResizer(size: PixelSize(width: 50, height: 90), mode: .stretch).resize(src)
        XCTAssertEqual([stretch.width, stretch.height], [50, 90])
        let widthOnly = try ImageResizer(size: PixelSize(width: 150, height: 0)).resize(src)
        XCTAssertEqual([widthOnly.width, widthOnly.height], [150, 100])
        let up = try ImageResizer(size: PixelSize(width: 600, height: 600)).resize(src)
        XCTAssertEqual([up.width, up.height], [600, 400], "an explicit resize may enlarge")
        let noUp = try ImageResizer(size: PixelSize(width: 600, height: 600), allowUpscale: false).resize(src)
        XCTAssertEqual([noUp.width, noUp.height], [300, 200])
        XCTAssertThrowsError(try ImageResizer(size: PixelSize(width: 0, height: 0)).resize(src))
        XCTAssertThrowsError(try ImageResizer(size: PixelSize(width: 200_000, height: 0)).resize(src)) { error in
            guard let e = error as? ImageKitError, e.code == .limitExceeded else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("200000x133333"), m)
        }
    }

    func testFillKeepsTheCentre() throws {
        // Left third red, middle third green, right third blue: filling a square keeps the green middle.
        var px: [UInt8] = []
        for _ in 0..<30 {
            for x in 0..<90 { px += x < 30 ? [255, 0, 0, 255] : x < 60 ? [0, 255, 0, 255] : [0, 0, 255, 255] }
        }
        let src = try Image(width: 90, height: 30, premultipliedRGBA: px)
        let fill = try ImageResizer(size: PixelSize(square: 10), mode: .fill).resize(src)
        let out = fill.packedPixels()
        XCTAssertEqual(Array(out[(5 * 10 + 5) * 4..<((5 * 10 + 5) * 4 + 4)]), [0, 255, 0, 255])
        XCTAssertTrue(fill.isOpaque)
    }

    func testTransparencyDoesNotDarkenEdges() throws {
        // Opaque white next to fully transparent black: a premultiplied resample keeps white white.
        var px: [UInt8] = []
        for _ in 0..<8 {
            for x in 0..<16 { px += x < 8 ? [255, 255, 255, 255] : [0, 0, 0, 0] }
        }
        let out = try ImageResizer(size: PixelSize(width: 4, height: 2), mode: .stretch)
            .resize(try Image(width: 16, height: 8, premultipliedRGBA: px)).packedPixels()
        var straight = [UInt8](repeating: 0, count: out.count)
        for i in stride(from: 0, to: out.count, by: 4) where out[i + 3] > 0 {
            for c in 0..<3 { straight[i + c] = UInt8(min(255, (Int(out[i + c]) * 255 + Int(out[i + 3]) / 2) / Int(out[i + 3]))) }
        }
        for i in stride(from: 0, to: out.count, by: 4) where out[i + 3] > 16 {
            XCTAssertGreaterThanOrEqual(straight[i], 250, "pixel \(i / 4) darkened: \(Array(out[i..<(i + 4)]))")
        }
    }

    func testCrop() throws {
        let src = try image(40, 30, alpha: true)
        let crop = try ImageResizer.crop(src, to: PixelRect(x: 5, y: 7, width: 10, height: 3))
        let all = src.packedPixels(), part = crop.packedPixels()
        for y in 0..<3 {
            XCTAssertEqual(Array(part[(y * 10 * 4)..<((y * 10 + 10) * 4)]), Array(all[(((y + 7) * 40 + 5) * 4)..<(((y + 7) * 40 + 15) * 4)]))
        }
        XCTAssertThrowsError(try ImageResizer.crop(src, to: PixelRect(x: 35, y: 0, width: 10, height: 3))) { error in
            guard let e = error as? ImageKitError, e.code == .invalidArgument else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("not inside"), m)
        }
    }

    func testAnimationsResizeEveryFrame() throws {
        let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 250, 250, 250]
        let gif = GIFWriter(width: 40, height: 20, globalPalette: palette, frames: (0..<3).map { f in
            .init(width: 40, height: 20, indices: [UInt8](repeating: UInt8(f), count: 800), delayCentiseconds: 5)
        }).encode()
        let animation = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(gif)
        let small = try ImageResizer(size: PixelSize(width: 10, height: 10)).resize(animation)
        XCTAssertEqual(small.frameCount, 3)
        XCTAssertEqual(small.frameDelays, [50, 50, 50])
        for f in 0..<3 {
            XCTAssertEqual(Array(small.packedPixels(frame: f)[0..<4]), Array(palette[(f * 3)..<(f * 3 + 3)]) + [255])
        }
    }

    func testLosslessRoundTripsAreExact() throws {
        for alpha in [false, true] {
            let src = try image(57, 33, alpha: alpha, seed: 3)
            for format in [EncodeFormat.png(), .png(compressionLevel: 0), .png(compressionLevel: 9), .webpLossless] {
                let data = try ImageEncoder.encode(src, as: format)
                let back = try ImageDecoder().decode(data)
                XCTAssertEqual(back.packedPixels(), src.packedPixels(), "\(format) alpha \(alpha)")
                XCTAssertEqual(try ImageDecoder.info(data).hasAlpha, alpha, "\(format): opaque images are written without alpha")
            }
        }
    }

    func testLossyEncodersAndJPEGBackground() throws {
        // Smooth gradients (4:2:0 chroma subsampling would blur anything sharper).
        let smooth = (0..<(64 * 48)).flatMap { (i: Int) -> [UInt8] in [UInt8(i % 64 * 4), UInt8(i / 64 * 5), 128, 255] }
        let src = try Image(width: 64, height: 48, premultipliedRGBA: smooth)
        for format in [EncodeFormat.jpeg(), .jpeg(quality: 95, progressive: true), .webp(quality: 90)] {
            let data = try ImageEncoder.encode(src, as: format)
            let back = try ImageDecoder().decode(data)
            XCTAssertGreaterThan(Quality.psnr(back, src), 30, "\(format)")
        }
        XCTAssertTrue(try ImageDecoder.info(ImageEncoder.encode(src, as: .jpeg(progressive: true))).isProgressive)
        // Half-transparent red over a blue background.
        let px = [UInt8](repeating: 0, count: 16 * 16).flatMap { _ in Pixels.premultiplied([255, 0, 0, 128]) }
        let red = try Image(width: 16, height: 16, premultipliedRGBA: px)
        let jpeg = try ImageEncoder.encode(red, as: .jpeg(quality: 100, background: RGBColor(red: 0, green: 0, blue: 255)))
        let mixed = try ImageDecoder().decode(jpeg).packedPixels()
        XCTAssertEqual(Double(mixed[0]), 128, accuracy: 4)
        XCTAssertEqual(Double(mixed[2]), 127, accuracy: 4)
        XCTAssertEqual(mixed[3], 255)
    }

    func testEncoderErrors() throws {
        let src = try image(8, 8, alpha: false)
        XCTAssertThrowsError(try ImageEncoder.encode(src, as: .jpeg(quality: 0)))
        XCTAssertThrowsError(try ImageEncoder.encode(src, as: .png(compressionLevel: 12)))
        XCTAssertThrowsError(try ImageEncoder.encode(src, as: .png(), frame: 1)) { error in
            guard (error as? ImageKitError)?.code == .invalidArgument else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(EncodeFormat(pathExtension: "JPG"), .jpeg())
        XCTAssertEqual(EncodeFormat(pathExtension: "gif"), .gif())
        XCTAssertNil(EncodeFormat(pathExtension: "tiff"))
    }
}
