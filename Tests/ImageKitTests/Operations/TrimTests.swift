import Foundation
import ImageKit
import XCTest

/// Trim against a double-precision reference (the box of every pixel with a premultiplied
/// sample more than the threshold away from the background's) and against `vips find_trim`.
final class TrimTests: XCTestCase {
    /// The reference box over every frame; nil when nothing differs.
    private func reference(_ image: Image, threshold: Double, background: [Double]? = nil) -> PixelRect? {
        let bg = background ?? ColorOpsCheck.samples(image).prefix(4).map { $0 }
        var left = Int.max, top = Int.max, right = -1, bottom = -1
        for frame in 0..<image.frameCount {
            let px = ColorOpsCheck.samples(image, frame: frame)
            for y in 0..<image.height {
                for x in 0..<image.width where (0..<4).contains(where: { abs(px[(y * image.width + x) * 4 + $0] - bg[$0]) > threshold }) {
                    (left, top, right, bottom) = (min(left, x), min(top, y), max(right, x), max(bottom, y))
                }
            }
        }
        return right < 0 ? nil : PixelRect(x: left, y: top, width: right - left + 1, height: bottom - top + 1)
    }

    /// `photo` on a `border` canvas at (x, y), the border's samples jittered by up to `noise`.
    private func bordered(_ photo: Image, border: RGBColor, x: Int, y: Int, width: Int, height: Int,
                          noise: Int = 0) throws -> Image {
        let padded = try PaddingTransformer(top: y, right: width - photo.width - x, bottom: height - photo.height - y,
                                            left: x, background: .color(border)).transform(photo)
        var px = padded.packedPixels()
        var seed: UInt64 = 7
        for i in stride(from: 0, to: px.count, by: 4) where noise > 0 {
            let col = (i / 4) % width, row = (i / 4) / width
            guard !((x..<x + photo.width).contains(col) && (y..<y + photo.height).contains(row)) else { continue }
            for c in 0..<3 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let jitter = Int(seed >> 33) % (2 * noise + 1) - noise
                px[i + c] = UInt8(clamping: Int(px[i + c]) + jitter)
            }
        }
        return try Image(width: width, height: height, premultipliedRGBA: px)
    }

    /// `vips find_trim` of `image` (written as PNG): its left, top, width and height.
    private func vipsFindTrim(_ image: Image, threshold: Double, background: RGBColor) throws -> PixelRect {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-trim-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try ImageEncoder.encode(image, as: .png()).write(to: file)
        let process = Process(), pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/vips")
        process.arguments = ["find_trim", file.path, "--threshold", "\(threshold)",
                             "--background", "\(background.red) \(background.green) \(background.blue)"]
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "vips find_trim failed")
        let n = output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard n.count == 4 else { throw ImageKitError.invalidArgument("vips find_trim printed \(output)") }
        return PixelRect(x: n[0], y: n[1], width: n[2], height: n[3])
    }

    func testMatchesTheReferenceOnSyntheticBorders() throws {
        let photo = try ColorOpsCheck.photo(width: 40, height: 30, alpha: false)
        let border = RGBColor(red: 250, green: 248, blue: 240)
        for (x, y, width, height) in [(7, 5, 60, 44), (0, 0, 40, 30), (0, 9, 57, 39), (20, 0, 60, 30), (1, 1, 42, 32)] {
            let image = try bordered(photo, border: border, x: x, y: y, width: width, height: height, noise: 4)
            for threshold in [0.0, 4.0, 10.0, 30.5] {
                let trim = TrimTransformer(threshold: threshold)
                let box = try trim.bounds(in: image)
                XCTAssertEqual(box, reference(image, threshold: threshold), "\(x),\(y) threshold \(threshold)")
                let out = try trim.transform(image)
                let expected = try CroppingTransformer(rect: box!).transform(image)
                XCTAssertEqual(out.packedPixels(), expected.packedPixels())
                XCTAssertTrue(out.isOpaque)
            }
            // Past the noise the border goes, to the photo's edge where it differs by more.
            let box = try XCTUnwrap(TrimTransformer(threshold: 10).bounds(in: image))
            XCTAssertTrue(box.x >= x && box.y >= y && box.x + box.width <= x + 40 && box.y + box.height <= y + 30, "\(box)")
            if x + y > 0 {
                XCTAssertEqual(try TrimTransformer(threshold: 0).bounds(in: image),
                               PixelRect(x: 0, y: 0, width: width, height: height), "threshold 0 keeps the noisy border")
            }
        }
    }

    func testAGivenBackgroundColour() throws {
        let photo = try ColorOpsCheck.photo(width: 20, height: 10, alpha: false)
        let image = try bordered(photo, border: .white, x: 3, y: 4, width: 30, height: 20)
        // The top-left pixel is white too; an explicit black background trims nothing.
        XCTAssertEqual(try TrimTransformer(background: .white).bounds(in: image), reference(image, threshold: 10))
        XCTAssertEqual(try TrimTransformer(background: .black).bounds(in: image), PixelRect(x: 0, y: 0, width: 30, height: 20))
        XCTAssertEqual(try TrimTransformer(background: .black).bounds(in: image),
                       reference(image, threshold: 10, background: [0, 0, 0, 255]))
    }

    func testAgreesWithVipsFindTrim() throws {
        // Synthetic: a photo on a uniform border; the same box.
        let photo = try ColorOpsCheck.photo(width: 64, height: 48, alpha: false, seed: 5)
        let border = RGBColor(red: 200, green: 180, blue: 160)
        let synthetic = try bordered(photo, border: border, x: 13, y: 9, width: 100, height: 70)
        for threshold in [10.0, 25.0] {
            let ours = try TrimTransformer(threshold: threshold, background: border).bounds(in: synthetic)
            XCTAssertEqual(ours, try vipsFindTrim(synthetic, threshold: threshold, background: border))
            XCTAssertEqual(ours, PixelRect(x: 13, y: 9, width: 64, height: 48))
        }
        // A JPEG round trip of a bordered photo: compression noise and chroma ringing spill a few
        // pixels into the border. libvips median-filters (3x3) first, which removes isolated
        // specks, so its box lies inside ours, by up to one 8-pixel block a side.
        let jpeg = try ImageDecoder().decode(ImageEncoder.encode(
            try bordered(ColorOpsCheck.photo(width: 120, height: 90, alpha: false, seed: 9), border: .white,
                         x: 24, y: 16, width: 170, height: 130), as: .jpeg(quality: 85)))
        for threshold in [10.0, 25.0] {
            let ours = try XCTUnwrap(TrimTransformer(threshold: threshold, background: .white).bounds(in: jpeg))
            let vips = try vipsFindTrim(jpeg, threshold: threshold, background: .white)
            print("trim jpeg threshold \(threshold): ours \(ours), vips find_trim \(vips)")
            let sides = [vips.x - ours.x, vips.y - ours.y, ours.x + ours.width - vips.x - vips.width,
                         ours.y + ours.height - vips.y - vips.height]
            XCTAssertTrue(sides.allSatisfy { (0...8).contains($0) }, "\(threshold): ours \(ours), vips \(vips)")
        }
    }

    func testAnImageThatIsAllBackgroundComesBackUnchanged() throws {
        let flat = try Image(width: 9, height: 7, premultipliedRGBA: [UInt8](repeating: 128, count: 9 * 7 * 4))
        XCTAssertNil(try TrimTransformer().bounds(in: flat))
        let out = try TrimTransformer().transform(flat)
        XCTAssertEqual(out.width, 9)
        XCTAssertEqual(out.height, 7)
        XCTAssertEqual(out.packedPixels(), flat.packedPixels())
        // Within the threshold is background too; 255 trims nothing of any image.
        let photo = try ColorOpsCheck.photo(width: 12, height: 12, alpha: true)
        XCTAssertNil(try TrimTransformer(threshold: 255).bounds(in: photo))
        XCTAssertEqual(try TrimTransformer(threshold: 255).transform(photo).packedPixels(), photo.packedPixels())
    }

    func testTransparentBordersAreTrimmedWhateverColourTheyHide() throws {
        let photo = try ColorOpsCheck.photo(width: 20, height: 15, alpha: false)
        let padded = try PaddingTransformer(top: 3, right: 4, bottom: 5, left: 6, background: .transparent).transform(photo)
        XCTAssertFalse(padded.isOpaque)
        let out = try TrimTransformer().transform(padded)
        XCTAssertEqual(out.packedPixels(), photo.packedPixels())
        XCTAssertTrue(out.isOpaque, "the trimmed image has no transparent pixel left")
        // A photo with its own soft alpha keeps it, and stays premultiplied.
        let soft = try ColorOpsCheck.photo(width: 30, height: 20, alpha: true)
        let trimmed = try TrimTransformer(threshold: 3).transform(soft)
        XCTAssertEqual(try TrimTransformer(threshold: 3).bounds(in: soft), reference(soft, threshold: 3))
        ColorOpsCheck.assertPremultiplied(trimmed)
    }

    func testAnAnimationIsCutToTheUnionOfItsFrames() throws {
        let white = [UInt8](repeating: 255, count: 40 * 30 * 4)
        func frame(_ rect: PixelRect?) -> [UInt8] {
            var px = white
            if let rect {
                for y in rect.y..<rect.y + rect.height {
                    for x in rect.x..<rect.x + rect.width { px.replaceSubrange((y * 40 + x) * 4..<(y * 40 + x) * 4 + 3, with: [200, 0, 0]) }
                }
            }
            return px
        }
        let low = frame(PixelRect(x: 5, y: 12, width: 4, height: 3)), high = frame(PixelRect(x: 20, y: 4, width: 10, height: 2))
        let union = PixelRect(x: 5, y: 4, width: 25, height: 11)
        // Either order: a later frame only widens the box.
        let reversed = try Image(width: 40, height: 30, frames: [high, frame(nil), low])
        XCTAssertEqual(try TrimTransformer().bounds(in: reversed), union)
        let animation = try Image(width: 40, height: 30, frames: [low, frame(nil), high],
                                  delaysMilliseconds: [40, 50, 60], loopCount: 2)
        XCTAssertEqual(try TrimTransformer().bounds(in: animation), union)
        XCTAssertEqual(reference(animation, threshold: 10), union)
        let out = try TrimTransformer().transform(animation)
        XCTAssertEqual(out.frameCount, 3)
        XCTAssertEqual(out.frameDelays, [40, 50, 60])
        XCTAssertEqual(out.loopCount, 2)
        let cropped = try CroppingTransformer(rect: union).transform(animation)
        for f in 0..<3 { XCTAssertEqual(out.packedPixels(frame: f), cropped.packedPixels(frame: f), "frame \(f)") }
    }

    func testBadThresholdsFailAndCancellationStops() throws {
        let src = try ColorOpsCheck.photo(width: 8, height: 8, alpha: false)
        for threshold: Double in [-1, 255.5, .nan, .infinity] {
            XCTAssertThrowsError(try TrimTransformer(threshold: threshold).transform(src)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument)
                XCTAssertTrue((error as? ImageKitError)?.message.hasPrefix("trim:") ?? false, "\(error)")
            }
        }
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        let big = try ColorOpsCheck.photo(width: 64, height: 64, alpha: false)
        XCTAssertThrowsError(try TrimTransformer().transform(big, cancellation: cancellation)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .cancelled)
        }
    }

    func testKeysAreStableAndDistinct() {
        XCTAssertEqual(TrimTransformer().key, "trim(10.0)")
        XCTAssertEqual(TrimTransformer(threshold: 10, background: .white).key, "trim(10.0,#ffffff)")
        ColorOpsCheck.assertDistinct([
            TrimTransformer().key, TrimTransformer(threshold: 20).key, TrimTransformer(background: .white).key,
            TrimTransformer(background: .black).key,
        ])
    }
}
