import CAnchors
import ImageKit
import ImageKitTestSupport
import XCTest

final class ThumbnailTests: XCTestCase {
    private func decoder(_ box: PixelSize, fill: Bool = false, upscale: Bool = false, allFrames: Bool = false) -> ImageDecoder {
        decoder(box, mode: fill ? .fill : .fit, upscale: upscale, allFrames: allFrames)
    }

    private func decoder(_ box: PixelSize, mode: ImageResizer.Mode, upscale: Bool = false,
                         allFrames: Bool = false) -> ImageDecoder {
        ImageDecoder(options: DecodeOptions(firstFrameOnly: !allFrames, thumbnailPixelSize: box,
                                            thumbnailMode: mode, allowUpscale: upscale))
    }

    private func png(_ rgba: [UInt8], _ w: Int, _ h: Int, alpha: Bool, interlaced: Bool = false) -> [UInt8] {
        if !interlaced {
            return anchorBytes { out, size in anchors_encode_png(rgba, Int32(w), Int32(h), alpha ? 1 : 0, out, size) }!
        }
        var writer = PNGWriter(width: w, height: h, colorType: alpha ? .rgba : .rgb, bitDepth: 8,
                               samples: (0..<(w * h)).flatMap { i in
                                   (0..<(alpha ? 4 : 3)).map { UInt16(rgba[i * 4 + $0]) }
                               })
        writer.interlaced = interlaced
        return writer.encode()
    }

    private func webp(_ rgba: [UInt8], _ w: Int, _ h: Int, quality: Float) -> [UInt8] {
        makeWebP(rgba, width: w, height: h, quality: quality)
    }

    private func gif(_ w: Int, _ h: Int, transparent: Bool) -> [UInt8] {
        let palette: [UInt8] = (0..<48).map { (i: Int) -> UInt8 in UInt8((i * 53) % 256) }
        let indices: [UInt8] = (0..<(w * h)).map { (i: Int) -> UInt8 in UInt8(((i % w) / 7 + (i / w) / 5) % 16) }
        return GIFWriter(width: w, height: h, globalPalette: palette,
                         frames: [.init(width: w, height: h, indices: indices, transparentIndex: transparent ? 3 : nil)]).encode()
    }

    /// The thumbnail of every lossless path must equal a full decode resized by
    /// ImageResizer: both feed the same rows through the same resampler.
    private func assertMatchesResizedFullDecode(_ bytes: [UInt8], _ box: PixelSize, mode: ImageResizer.Mode,
                                                _ label: String, file: StaticString = #filePath,
                                                line: UInt = #line) throws {
        let thumb = try decoder(box, mode: mode).decode(bytes)
        let full = try ImageDecoder().decode(bytes)
        let reference = try ImageResizer(size: box, mode: mode, allowUpscale: false).resize(full)
        XCTAssertEqual(thumb.width, reference.width, label, file: file, line: line)
        XCTAssertEqual(thumb.height, reference.height, label, file: file, line: line)
        XCTAssertTrue(thumb.packedPixels() == reference.packedPixels(), "\(label): pixels differ", file: file, line: line)
        XCTAssertEqual(thumb.isOpaque, reference.isOpaque, label, file: file, line: line)
    }

    func testEachLosslessFormatFitFillAndStretchOpaqueAndAlpha() throws {
        let (w, h) = (301, 203)
        for alpha in [false, true] {
            let px = SyntheticPhoto.rgba(width: w, height: h, seed: 5, alpha: alpha)
            for mode in [ImageResizer.Mode.fit, .fill, .stretch] {
                let box = PixelSize(width: 64, height: 64)
                try assertMatchesResizedFullDecode(png(px, w, h, alpha: alpha), box, mode: mode, "PNG alpha \(alpha) \(mode)")
                try assertMatchesResizedFullDecode(png(px, w, h, alpha: alpha, interlaced: true), box, mode: mode,
                                                   "interlaced PNG alpha \(alpha) \(mode)")
                try assertMatchesResizedFullDecode(gif(w, h, transparent: alpha), box, mode: mode,
                                                   "GIF alpha \(alpha) \(mode)")
                if alpha {
                    try assertMatchesResizedFullDecode(webp(px, w, h, quality: -1), box, mode: mode,
                                                       "WebP lossless \(mode)")
                }
            }
        }
    }

    func testShrinkOnLoadFormatsStayCloseToAFullDecode() throws {
        let (w, h) = (1200, 900)
        let px = SyntheticPhoto.rgba(width: w, height: h, seed: 6)
        let inputs: [(String, [UInt8])] = [
            ("JPEG baseline", makeJPEG(px, width: w, height: h, quality: 95)),
            ("JPEG progressive", makeJPEG(px, width: w, height: h, quality: 95, progressive: true)),
            ("WebP lossy", webp(px, w, h, quality: 95)),
        ]
        for (label, bytes) in inputs {
            for mode in [ImageResizer.Mode.fit, .fill, .stretch] {
                let box = PixelSize(width: 100, height: 100)
                var stats = DecodeStatistics()
                let thumb = try bytes.withUnsafeBytes { try decoder(box, mode: mode).decode($0, statistics: &stats) }
                let full = try ImageDecoder().decode(bytes)
                let reference = try ImageResizer(size: box, mode: mode).resize(full)
                XCTAssertEqual(PixelSize(width: thumb.width, height: thumb.height),
                               mode == .fit ? PixelSize(width: 100, height: 75) : box, label)
                XCTAssertLessThan(stats.codecSize.width, w, "\(label) shrank on load")
                XCTAssertGreaterThanOrEqual(Quality.psnr(thumb, reference), 30, "\(label) \(mode)")
            }
        }
    }

    func testOneEighthScaleMatchesTurboJPEG() throws {
        let (w, h) = (800, 600)
        let px = SyntheticPhoto.rgba(width: w, height: h, seed: 7)
        for progressive in [false, true] {
            let jpeg = makeJPEG(px, width: w, height: h, progressive: progressive)
            var stats = DecodeStatistics()
            let thumb = try jpeg.withUnsafeBytes { try decoder(PixelSize(width: 100, height: 75)).decode($0, statistics: &stats) }
            let reference = try XCTUnwrap(turboDecode(jpeg, denominator: 8))
            XCTAssertEqual(stats.codecSize, PixelSize(width: 100, height: 75))
            XCTAssertEqual(thumb.width, reference.width)
            let ours = thumb.packedPixels()
            if !progressive {
                XCTAssertTrue(ours == reference.pixels, "baseline 1/8 must be bit-exact")
                continue
            }
            // Progressive stops after the DC scans: luma exact, subsampled chroma within a few levels.
            let expected = try Image(width: reference.width, height: reference.height, premultipliedRGBA: reference.pixels)
            let maxDiff = zip(ours, reference.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(maxDiff, 6)
            XCTAssertGreaterThan(Quality.psnr(thumb, expected), 45)
        }
    }

    func testOddSizesAndScaleFactorsDownToOneSixtyFourth() throws {
        for (w, h) in [(1, 97), (97, 1), (101, 103), (1, 1), (640, 7)] {
            let px = SyntheticPhoto.rgba(width: w, height: h, seed: 8, alpha: true)
            let bytes = png(px, w, h, alpha: true)
            for box in [PixelSize(width: 13, height: 13), PixelSize(width: 1, height: 1), PixelSize(width: 0, height: 5)] {
                try assertMatchesResizedFullDecode(bytes, box, mode: .fit, "\(w)x\(h) to \(box)")
                try assertMatchesResizedFullDecode(bytes, box, mode: .fill, "\(w)x\(h) fill \(box)")
                try assertMatchesResizedFullDecode(bytes, box, mode: .stretch, "\(w)x\(h) stretch \(box)")
            }
        }
        // A flat colour must stay exactly flat at every factor (weights sum to 1).
        let flat = [UInt8](repeating: 0, count: 640 * 640 * 4).enumerated().map { (i: Int, _: UInt8) -> UInt8 in
            [200, 100, 50, 160][i % 4]
        }
        let bytes = png(flat, 640, 640, alpha: true)
        let expected = Pixels.premultiplied([200, 100, 50, 160])
        for side in [640, 448, 320, 160, 80, 40, 20, 10] {
            let thumb = try decoder(PixelSize(square: side)).decode(bytes)
            XCTAssertEqual(thumb.width, side)
            let pixels = thumb.packedPixels()
            XCTAssertTrue(stride(from: 0, to: pixels.count, by: 4).allSatisfy { Array(pixels[$0..<($0 + 4)]) == expected },
                          "flat colour changed at \(side)")
        }
    }

    func testNeverUpscalesUnlessAsked() throws {
        let bytes = png(SyntheticPhoto.rgba(width: 40, height: 30, seed: 9), 40, 30, alpha: false)
        let fit = try decoder(PixelSize(width: 400, height: 400)).decode(bytes)
        XCTAssertEqual([fit.width, fit.height], [40, 30])
        let fill = try decoder(PixelSize(width: 400, height: 20), fill: true).decode(bytes)
        XCTAssertEqual([fill.width, fill.height], [40, 20], "the box is clipped to the source, not upscaled")
        let up = try decoder(PixelSize(width: 400, height: 400), upscale: true).decode(bytes)
        XCTAssertEqual([up.width, up.height], [400, 300])
    }

    func testScaleDownLimitKeepsAspectRatio() throws {
        let bytes = png(SyntheticPhoto.rgba(width: 1000, height: 800, seed: 10), 1000, 800, alpha: false)
        let image = try ImageDecoder(options: DecodeOptions(scaleDownLimitBytes: 100_000)).decode(bytes)
        XCTAssertLessThanOrEqual(image.width * image.height * 4, 100_000)
        XCTAssertGreaterThan(image.width * image.height * 4, 90_000)
        XCTAssertEqual(Double(image.width) / Double(image.height), 1.25, accuracy: 0.02)
    }

    func testThumbnailBoxAppliesToTheUprightPicture() throws {
        let stored = makeJPEG(SyntheticPhoto.rgba(width: 400, height: 200, seed: 11), width: 400, height: 200)
        var tiff: [UInt8] = Array("II".utf8) + [42, 0, 8, 0, 0, 0, 1, 0]
        tiff += [0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0] // orientation 6
        let app1: [UInt8] = [0xFF, 0xE1] + be16(UInt16(tiff.count + 8)) + Array("Exif".utf8) + [0, 0] + tiff
        let jpeg = Array(stored[0..<2]) + app1 + stored[2...]
        let thumb = try decoder(PixelSize(width: 100, height: 100)).decode(jpeg)
        XCTAssertEqual([thumb.width, thumb.height], [50, 100])
        let reference = try ImageResizer(size: PixelSize(square: 100)).resize(try ImageDecoder().decode(jpeg))
        XCTAssertGreaterThan(Quality.psnr(thumb, reference), 30)
    }

    func testEveryFrameOfAnAnimationIsThumbnailed() throws {
        let palette: [UInt8] = (0..<48).map { (i: Int) -> UInt8 in UInt8((i * 91) % 256) }
        let frames = (0..<3).map { f in
            GIFWriter.Frame(left: f * 10, top: f * 5, width: 60, height: 40,
                            indices: (0..<2400).map { (i: Int) -> UInt8 in UInt8((i / 9 + f) % 16) },
                            transparentIndex: 2, disposal: f == 1 ? 2 : 1, delayCentiseconds: 4 + f)
        }
        let bytes = GIFWriter(width: 90, height: 60, globalPalette: palette, frames: frames).encode()
        let thumbs = try decoder(PixelSize(square: 30), allFrames: true).decode(bytes)
        let full = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(bytes)
        let reference = try ImageResizer(size: PixelSize(square: 30)).resize(full)
        XCTAssertEqual(thumbs.frameCount, 3)
        XCTAssertEqual(thumbs.frameDelays, [40, 50, 60])
        for f in 0..<3 {
            XCTAssertEqual(thumbs.packedPixels(frame: f), reference.packedPixels(frame: f), "frame \(f)")
        }
    }

    func testShrinkOnLoadNeverHoldsTheFullBitmap() throws {
        let (w, h) = (2000, 1500)
        let full = w * h * 4
        let px = SyntheticPhoto.rgba(width: w, height: h, seed: 12, alpha: true)
        // PNG: testPNGThumbnailsStreamUnderATightMemoryLimit (its fast path holds the filtered image).
        let cases: [(String, [UInt8])] = [
            ("JPEG", makeJPEG(px, width: w, height: h)),
            ("progressive JPEG", makeJPEG(px, width: w, height: h, progressive: true)),
            ("opaque WebP", webp(SyntheticPhoto.rgba(width: w, height: h, seed: 12), w, h, quality: 80)),
        ]
        for (label, bytes) in cases {
            var stats = DecodeStatistics()
            let thumb = try bytes.withUnsafeBytes { try decoder(PixelSize(square: 128)).decode($0, statistics: &stats) }
            XCTAssertEqual(thumb.width, 128, label)
            // A progressive JPEG at 1/8 goes to ImageKit's DC-only decoder, which holds a few
            // block rows instead of libjpeg's whole-image coefficient buffer (3 bytes a pixel
            // at 4:2:0): it stays far below too.
            XCTAssertLessThan(stats.peakBytes, full / 8, "\(label) held \(stats.peakBytes) bytes")
        }
        // A full decode does hold it, which is what makes the figures above meaningful.
        var stats = DecodeStatistics()
        _ = try cases[0].1.withUnsafeBytes { try ImageDecoder().decode($0, statistics: &stats) }
        XCTAssertGreaterThanOrEqual(stats.peakBytes, full)
    }

    /// PNG thumbnails take the fast path (png_fast.c: the whole IDAT stream inflated at once)
    /// when its filtered image fits the memory limit, and then hold that (about the full
    /// bitmap for RGBA) but never the full RGBA bitmap on top of it; under a tighter limit
    /// libpng streams rows and the peak follows the output again.
    func testPNGThumbnailsStreamUnderATightMemoryLimit() throws {
        let (w, h) = (2000, 1500)
        let full = w * h * 4
        let bytes = png(SyntheticPhoto.rgba(width: w, height: h, seed: 12, alpha: true), w, h, alpha: true)
        var fast = DecodeStatistics()
        _ = try bytes.withUnsafeBytes { try decoder(PixelSize(square: 128)).decode($0, statistics: &fast) }
        XCTAssertGreaterThanOrEqual(fast.peakBytes, full, "the filtered image")
        XCTAssertLessThan(fast.peakBytes, full + full / 8 + bytes.count)
        let tight = ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxMemoryBytes: full / 2),
                                                        thumbnailPixelSize: PixelSize(square: 128)))
        var streamed = DecodeStatistics()
        let thumb = try bytes.withUnsafeBytes { try tight.decode($0, statistics: &streamed) }
        XCTAssertEqual(thumb.width, 128)
        XCTAssertLessThan(streamed.peakBytes, full / 8)
    }

    func testThumbnailQualityAgainstLanczosOfTheFullDecode() throws {
        let (w, h) = (2400, 1600) // 1/8 is 300x200: the 256 px thumbnail takes the 1/8 path
        let jpeg = makeJPEG(SyntheticPhoto.rgba(width: w, height: h, seed: 13), width: w, height: h, quality: 92)
        let thumb = try decoder(PixelSize(square: 256)).decode(jpeg)
        let reference = try ImageResizer(size: PixelSize(square: 256)).resize(try ImageDecoder().decode(jpeg))
        let psnr = Quality.psnr(thumb, reference)
        print("thumbnail PSNR against Lanczos-3 of the full decode: \(psnr) dB")
        XCTAssertGreaterThanOrEqual(psnr, 35)
    }
}
