import Foundation
@testable import ImageKit
import ImageKitTestSupport
import XCTest

/// Animated GIF and WebP encoding: frames, delays and loop counts survive our decoder and a
/// second one (Pillow), pixels within the palette's or the codec's error.
final class AnimatedEncodeTests: XCTestCase {
    private let delays = [40, 50, 60, 70, 80]

    /// `count` frames of a photo seen through a window moving 6 pixels a frame (opaque).
    private func photoAnimation(width: Int = 96, height: Int = 64, count: Int = 5) throws -> Image {
        let wide = width + 6 * count
        let photo = SyntheticPhoto.rgba(width: wide, height: height, seed: 7)
        let frames = (0..<count).map { i -> [UInt8] in
            var frame = [UInt8]()
            frame.reserveCapacity(width * height * 4)
            for y in 0..<height {
                let start = (y * wide + 6 * i) * 4
                frame += photo[start..<(start + width * 4)]
            }
            return frame
        }
        return try Image(width: width, height: height, frames: frames, delaysMilliseconds: Array(delays.prefix(count)),
                         loopCount: 3, premultiplied: false)
    }

    /// Frames of at most 256 colours (255 and transparent ones with `alpha`), different every frame.
    private func paletteAnimation(alpha: Bool, width: Int = 70, height: Int = 50) throws -> Image {
        let frames = (0..<delays.count).map { i -> [UInt8] in
            var px = Pixels.pattern(width: width, height: height, seed: i * 20)
            for p in stride(from: 0, to: px.count, by: 4) {
                px[p] &= 0xE0
                px[p + 1] &= 0xE0
                px[p + 2] &= alpha ? 0x80 : 0xC0
                let transparent = alpha && (p / 4 + i * 3) % 7 == 0
                px[p + 3] = transparent ? 0 : 255
                if transparent { px[p] = 0; px[p + 1] = 0; px[p + 2] = 0 }
            }
            return px
        }
        return try Image(width: width, height: height, frames: frames, delaysMilliseconds: delays, loopCount: 3,
                         premultiplied: false)
    }

    private func decodeAll(_ data: Data) throws -> Image {
        try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(data)
    }

    /// Peak signal-to-noise ratio of frame `frame` of `b` against `a`, over RGBA.
    private func psnr(_ a: Image, _ b: Image, frame: Int) -> Double {
        let x = a.packedPixels(frame: frame), y = b.packedPixels(frame: frame)
        var se = 0.0
        for i in 0..<x.count { let d = Double(x[i]) - Double(y[i]); se += d * d }
        let mse = se / Double(x.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    private func assertTiming(_ image: Image, frames: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(image.frameCount, frames, file: file, line: line)
        XCTAssertEqual(image.frameDelays, Array(delays.prefix(frames)), file: file, line: line)
        XCTAssertEqual(image.loopCount, 3, file: file, line: line)
    }

    func testGIFOfFewColoursRoundTripsExactly() throws {
        for alpha in [false, true] {
            let source = try paletteAnimation(alpha: alpha)
            let data = try ImageEncoder.encode(source, as: .gif())
            XCTAssertEqual(ImageFormat(detecting: data), .gif)
            XCTAssertEqual(Array(data.prefix(6)), Array("GIF89a".utf8))
            let back = try decodeAll(data)
            assertTiming(back, frames: delays.count)
            for f in 0..<source.frameCount {
                XCTAssertEqual(back.packedPixels(frame: f), source.packedPixels(frame: f), "alpha \(alpha), frame \(f)")
            }
        }
    }

    func testGIFOfAPhotoIsWithinThePalettesError() throws {
        let source = try photoAnimation()
        for dithering in [GIFDithering.none, .floydSteinberg] {
            let data = try ImageEncoder.encode(source, as: .gif(dithering: dithering))
            let back = try decodeAll(data)
            assertTiming(back, frames: delays.count)
            for f in 0..<source.frameCount {
                let value = psnr(source, back, frame: f)
                XCTAssertGreaterThan(value, 30, "\(dithering), frame \(f)")
            }
        }
    }

    func testGIFFrameDifferencingWritesLessThanWholeFrames() throws {
        // The photo moves under a still border: later frames change only the moving window.
        let width = 120, height = 80
        let border = SyntheticPhoto.rgba(width: width, height: height, seed: 3)
        let moving = try photoAnimation(width: 40, height: 30)
        let frames = (0..<moving.frameCount).map { f -> [UInt8] in
            var px = border
            let window = moving.packedPixels(frame: f)
            for y in 0..<30 { px.replaceSubrange((y + 20) * width * 4 + 160..<((y + 20) * width * 4 + 160 + 160), with: window[(y * 160)..<(y * 160 + 160)]) }
            return px
        }
        let source = try Image(width: width, height: height, frames: frames, delaysMilliseconds: delays, loopCount: 3,
                               premultiplied: false)
        let data = try ImageEncoder.encode(source, as: .gif())
        let stills = try (0..<source.frameCount).map { try ImageEncoder.encode(source, as: .gif(), frame: $0).count }
        XCTAssertLessThan(data.count, stills.reduce(0, +) * 2 / 3, "differencing: \(data.count) vs \(stills)")
        let back = try decodeAll(data)
        assertTiming(back, frames: delays.count)
        for f in 0..<source.frameCount { XCTAssertGreaterThan(psnr(source, back, frame: f), 30, "frame \(f)") }
    }

    func testGIFDelaysAreCentisecondsAndAlphaHasOneThreshold() throws {
        // Delays round to the nearest centisecond; 0 and 10 ms are written as they are.
        let frames = [127, 128, 255, 0].map { (alpha: UInt8) in [255, 0, 0, alpha, 0, 255, 0, alpha] }
        let source = try Image(width: 2, height: 1, frames: frames, delaysMilliseconds: [0, 14, 15, 1004],
                               premultiplied: false)
        let back = try decodeAll(try ImageEncoder.encode(source, as: .gif()))
        XCTAssertEqual(back.frameDelays, [0, 10, 20, 1000])
        XCTAssertEqual(back.loopCount, 0)
        // Alpha 127 is below the threshold (transparent); 128 and above is opaque.
        XCTAssertEqual(back.packedPixels(frame: 0), [0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(back.packedPixels(frame: 1), [255, 0, 0, 255, 0, 255, 0, 255])
        XCTAssertEqual(back.packedPixels(frame: 2), [255, 0, 0, 255, 0, 255, 0, 255])
    }

    func testAWebPFrameLongerThanTheFileHoldsIsWrittenAsTheLongest() throws {
        // An APNG frame may last 65535 s; an animated WebP frame at most 2^24 - 1 ms (fuzz_encode
        // found the encode failing on such an APNG).
        let frames = [0, 1, 2].map { (v: UInt8) in [v, v, v, 255] }
        let source = try Image(width: 1, height: 1, frames: frames, delaysMilliseconds: [500, 55_809_000, 40],
                               loopCount: 2, premultiplied: false)
        for format in [EncodeFormat.webpLossless, .webp(quality: 30)] {
            let back = try decodeAll(try ImageEncoder.encode(source, as: format))
            XCTAssertEqual(back.frameDelays, [500, 16_777_215, 40], "\(format)")
            XCTAssertEqual(back.loopCount, 2, "\(format)")
        }
        let gif = try decodeAll(try ImageEncoder.encode(source, as: .gif()))
        XCTAssertEqual(gif.frameDelays, [500, 655_350, 40], "GIF's longest, as before")
    }

    func testAnImageWiderThanWebPHoldsIsRefusedByBothWebPEncoders() throws {
        // WebP's sides are 14 bits: 16383 at most; a still and an animation are refused alike.
        let row = [UInt8](repeating: 200, count: 16_384 * 4)
        let still = try Image(width: 16_384, height: 1, frames: [row])
        let animation = try Image(width: 16_384, height: 1, frames: [row, row], delaysMilliseconds: [100, 100],
                                  loopCount: 0, premultiplied: false)
        for (image, format) in [(still, EncodeFormat.webp(quality: 50)), (still, .webpLossless),
                                (animation, .webp(quality: 50)), (animation, .webpLossless)] {
            XCTAssertThrowsError(try ImageEncoder.encode(image, as: format), "\(format)") { error in
                XCTAssertEqual(error as? ImageKitError,
                               .encodeFailed("WebP: 16384x1 is larger than WebP's 16383x16383"))
            }
        }
        let narrower = try Image(width: 16_383, height: 1, frames: [Array(row.dropLast(4))])
        XCTAssertEqual(try decodeAll(try ImageEncoder.encode(narrower, as: .webpLossless)).width, 16_383)
    }

    func testStillImagesAndOneFrameGiveStillFiles() throws {
        let animation = try paletteAnimation(alpha: false)
        for format in [EncodeFormat.gif(), .webpLossless] {
            let third = try decodeAll(try ImageEncoder.encode(animation, as: format, frame: 2))
            XCTAssertEqual(third.frameCount, 1, "\(format)")
            XCTAssertEqual(third.packedPixels(), animation.packedPixels(frame: 2), "\(format)")
        }
        let still = try Image(width: 70, height: 50, frames: [animation.packedPixels(frame: 1)])
        let gif = try decodeAll(try ImageEncoder.encode(still, as: .gif()))
        XCTAssertEqual(gif.frameCount, 1)
        XCTAssertEqual(gif.packedPixels(), still.packedPixels())
        // JPEG and PNG write the first frame.
        let png = try decodeAll(try ImageEncoder.encode(animation, as: .png()))
        XCTAssertEqual(png.frameCount, 1)
        XCTAssertEqual(png.packedPixels(), animation.packedPixels(frame: 0))
    }

    func testAnimatedWebPKeepsFramesDelaysAndLoopCount() throws {
        let palette = try paletteAnimation(alpha: true)
        let lossless = try decodeAll(try ImageEncoder.encode(palette, as: .webpLossless))
        assertTiming(lossless, frames: delays.count)
        for f in 0..<palette.frameCount {
            XCTAssertEqual(lossless.packedPixels(frame: f), palette.packedPixels(frame: f), "frame \(f)")
        }
        let photo = try photoAnimation()
        let lossy = try decodeAll(try ImageEncoder.encode(photo, as: .webp(quality: 90)))
        assertTiming(lossy, frames: delays.count)
        for f in 0..<photo.frameCount { XCTAssertGreaterThan(psnr(photo, lossy, frame: f), 30, "frame \(f)") }
        let small = try ImageEncoder.encode(photo, as: .webp(quality: 10))
        let large = try ImageEncoder.encode(photo, as: .webp(quality: 90))
        XCTAssertLessThan(small.count, large.count)
    }

    func testGIFRefusesBadOptionsAndProfiles() throws {
        let image = try paletteAnimation(alpha: false)
        for format in [EncodeFormat.gif(quality: 101), .gif(quality: -1), .gif(speed: 0), .gif(speed: 11)] {
            XCTAssertThrowsError(try ImageEncoder.encode(image, as: format), "\(format)") { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("GIF: ") ?? false, "\(error)")
            }
        }
        var profile = [UInt8](repeating: 0, count: 132)
        profile[3] = 132
        profile.replaceSubrange(36..<40, with: Array("acsp".utf8))
        XCTAssertThrowsError(try ImageEncoder.encode(image, as: .gif(), iccProfile: Data(profile))) { error in
            XCTAssertEqual((error as? ImageKitError)?.message, "GIF: ImageKit embeds no ICC profile in GIF")
        }
    }

    /// Pillow reads our files: frame count, delays and loop count. Skips without python3 + Pillow.
    func testPillowReadsTheAnimations() throws {
        guard let python = pillowPython() else {
            throw XCTSkip("python3 with Pillow (PIL) is not installed: `pip install Pillow` to run this test")
        }
        let photo = try photoAnimation()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-anim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, format) in [("a.gif", EncodeFormat.gif()), ("a.webp", .webp()), ("l.webp", .webpLossless),
                               ("p.gif", .gif(dithering: .none))] {
            let url = dir.appendingPathComponent(name)
            try ImageEncoder.encode(name == "p.gif" ? try paletteAnimation(alpha: true) : photo, as: format).write(to: url)
            let script = """
                import sys
                from PIL import Image
                im = Image.open(sys.argv[1])
                d = []
                for i in range(im.n_frames):
                    im.seek(i); im.load(); d.append(im.info.get('duration'))
                print(im.n_frames, im.info.get('loop'), ','.join(str(x) for x in d), im.size[0], im.size[1])
                """
            let out = try run(python, ["-c", script, url.path])
            XCTAssertEqual(out, "5 3 40,50,60,70,80 \(name == "p.gif" ? "70 50" : "96 64")\n", name)
        }
    }

    private func pillowPython() -> String? {
        for candidate in ["/usr/bin/env"] {
            if let out = try? run(candidate, ["python3", "-c", "import PIL, sys; print(sys.executable)"]),
               !out.isEmpty {
                return out.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return nil
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ImageKitError.invalidArgument("\(executable) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
