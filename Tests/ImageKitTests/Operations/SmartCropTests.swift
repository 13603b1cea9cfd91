import Foundation
import ImageKit
import XCTest

/// Smart crop (ic_attention_window): it finds a textured, skin-coloured or saturated patch on
/// a flat background wherever it is, ignores what is transparent, and agrees with
/// `vips smartcrop --interesting attention` on real photos.
final class SmartCropTests: XCTestCase {
    private enum Patch: CaseIterable { case saturated, skin, texture }

    /// A flat grey width x height picture with a 40x40 patch at (x, y); `hidden`: a second,
    /// textured patch at the opposite corner with alpha 0.
    private func picture(width: Int = 240, height: Int = 160, patch: Patch, x: Int, y: Int,
                         hidden: Bool = false) throws -> Image {
        var px = [UInt8](repeating: 0, count: width * height * 4)
        var rng = SplitMix(seed: 7)
        for i in 0..<(width * height) {
            px[4 * i] = 128; px[4 * i + 1] = 128; px[4 * i + 2] = 128; px[4 * i + 3] = 255
            let (cx, cy) = (i % width, i / width)
            if (x..<x + 40).contains(cx), (y..<y + 40).contains(cy) {
                switch patch {
                case .saturated: (px[4 * i], px[4 * i + 1], px[4 * i + 2]) = (220, 30, 30)
                case .skin: (px[4 * i], px[4 * i + 1], px[4 * i + 2]) = (224, 164, 127)
                case .texture:
                    let v = UInt8(truncatingIfNeeded: rng.next())
                    (px[4 * i], px[4 * i + 1], px[4 * i + 2]) = (v, v, v)
                }
            }
            if hidden, (width - 40 - x..<width - x).contains(cx), (height - 40 - y..<height - y).contains(cy) {
                (px[4 * i], px[4 * i + 1], px[4 * i + 2], px[4 * i + 3]) = (0, 0, 0, 0)
            }
        }
        return try Image(width: width, height: height, frames: [px], premultiplied: false)
    }

    /// Where the window `out` was cut from `src` (exact match), or nil. Rows are compared with
    /// memcmp: a search in Swift slices took minutes at -Onone under the sanitizers.
    private func origin(of out: Image, in src: Image) -> (x: Int, y: Int)? {
        let s = src.packedPixels(), o = out.packedPixels(), rowBytes = out.width * 4
        return s.withUnsafeBytes { whole -> (x: Int, y: Int)? in
            o.withUnsafeBytes { window -> (x: Int, y: Int)? in
                for y in 0...(src.height - out.height) {
                    for x in 0...(src.width - out.width) {
                        var row = 0
                        while row < out.height,
                              memcmp(whole.baseAddress! + ((y + row) * src.width + x) * 4,
                                     window.baseAddress! + row * rowBytes, rowBytes) == 0 {
                            row += 1
                        }
                        if row == out.height { return (x, y) }
                    }
                }
                return nil
            }
        }
    }

    func testFindsThePatchWhereverItIs() throws {
        for patch in Patch.allCases {
            for (x, y) in [(10, 10), (190, 110), (100, 60), (195, 5), (5, 115)] {
                let src = try picture(patch: patch, x: x, y: y)
                let out = try CroppingTransformer(size: PixelSize(width: 80, height: 80), gravity: .smart).transform(src)
                let at = try XCTUnwrap(origin(of: out, in: src))
                XCTAssertTrue(at.x <= x && x + 40 <= at.x + 80 && at.y <= y && y + 40 <= at.y + 80,
                              "\(patch) at (\(x), \(y)): window at \(at)")
            }
        }
    }

    func testTransparentContentIsIgnored() throws {
        // A saturated patch at the top left, a textured one bottom right with alpha 0.
        let src = try picture(patch: .saturated, x: 20, y: 20, hidden: true)
        let out = try CroppingTransformer(size: PixelSize(width: 80, height: 80), gravity: .smart).transform(src)
        let at = try XCTUnwrap(origin(of: out, in: src))
        XCTAssertTrue(at.x <= 20 && at.y <= 20, "window at \(at)")
        ColorOpsCheck.assertPremultiplied(out)
        XCTAssertTrue(out.isOpaque)
    }

    func testAFlatImageGetsTheCentre() throws {
        let flat = try Image(width: 50, height: 30, premultipliedRGBA: [UInt8](repeating: 200, count: 50 * 30 * 4))
        let out = try CroppingTransformer(size: PixelSize(width: 20, height: 10), gravity: .smart).transform(flat)
        XCTAssertEqual(out.width, 20)
        let centre = try CroppingTransformer(size: PixelSize(width: 20, height: 10)).transform(flat)
        XCTAssertEqual(out.packedPixels(), centre.packedPixels())
    }

    /// A smart fill resizes to cover the box and cuts the attention window from that: the
    /// red patch on the right of a wide picture stays in; a centre fill loses it.
    func testSmartFillKeepsTheInterestingPart() throws {
        let src = try picture(width: 240, height: 80, patch: .saturated, x: 190, y: 20)
        let box = PixelSize(width: 40, height: 40)
        let smart = try ResizingTransformer(size: box, mode: .fill, gravity: .smart).transform(src)
        let cover = try ImageResizer(size: PixelSize(width: 0, height: 40)).resize(src)
        let expected = try CroppingTransformer(size: box, gravity: .smart).transform(cover)
        XCTAssertEqual(smart.packedPixels(), expected.packedPixels())
        func reds(_ image: Image) -> Int {
            let px = image.packedPixels()
            return stride(from: 0, to: px.count, by: 4).filter { px[$0] > 150 && px[$0 + 1] < 80 }.count
        }
        XCTAssertGreaterThan(reds(smart), 100)
        XCTAssertEqual(reds(try ResizingTransformer(size: box, mode: .fill).transform(src)), 0)
    }

    /// Every frame is cut at the window chosen on the first, keeping delays and loop count.
    func testAnimationsAreCutAlike() throws {
        let animation = try ColorOpsCheck.animation()
        let out = try CroppingTransformer(size: PixelSize(width: 10, height: 8), gravity: .smart).transform(animation)
        XCTAssertEqual(out.frameCount, 3)
        XCTAssertEqual(out.frameDelays, [40, 50, 60])
        XCTAssertEqual(out.loopCount, 2)
        let first = try Image(width: animation.width, height: animation.height,
                              premultipliedRGBA: animation.packedPixels(frame: 0))
        let at = try XCTUnwrap(origin(of: CroppingTransformer(size: PixelSize(width: 10, height: 8), gravity: .smart)
            .transform(first), in: first))
        for frame in 0..<3 {
            let alone = try Image(width: animation.width, height: animation.height,
                                  premultipliedRGBA: animation.packedPixels(frame: frame))
            XCTAssertEqual(out.packedPixels(frame: frame),
                           try ImageResizer.crop(alone, to: PixelRect(x: at.x, y: at.y, width: 10, height: 8)).packedPixels())
        }
    }

    func testCancellation() throws {
        let src = try picture(patch: .texture, x: 10, y: 10)
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        for transformer in [CroppingTransformer(size: PixelSize(width: 50, height: 50), gravity: .smart)
                            as any CancellableImageTransformer,
                            ResizingTransformer(size: PixelSize(width: 50, height: 50), mode: .fill, gravity: .smart)] {
            XCTAssertThrowsError(try transformer.transform(src, cancellation: cancellation)) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .cancelled, "\(error)")
            }
        }
    }

    /// Against `vips smartcrop in out W H --interesting attention` on real photos: the share of
    /// our window that vips's window covers. libvips shrinks the whole image to 32 x 32 cells,
    /// scores Laplacian edges of XYZ's Y, a skin distance in XYZ and Lab's a*; we score 4 x 4
    /// samples a cell, chroma and skin in sRGB, and centre on the cell's middle (libvips: its
    /// left edge), so the windows differ by a few pixels where the peak is clear and may go
    /// apart where the photo has several peaks of about the same height.
    func testAgreesWithLibvipsOnPhotos() throws {
        guard let vips = VipsCommand.path else { throw XCTSkip("vips is not installed (make deps)") }
        let corpus = VipsCommand.corpus
        let photos = ["libjpeg-turbo/testimages/testorig.jpg", "libwebp-test-data/lossless_color_transform.webp"]
        for name in photos {
            let url = corpus.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("no shared corpus at \(corpus.path)") }
            let photo = try ImageDecoder().decode(Data(contentsOf: url))
            let short = min(photo.width, photo.height)
            for (w, h) in [(short / 2, short / 2), (photo.width / 2, photo.height), (photo.width / 3, photo.height / 3)] {
                let ours = try XCTUnwrap(origin(of: CroppingTransformer(size: PixelSize(width: w, height: h), gravity: .smart)
                    .transform(photo), in: photo))
                let theirs = try vipsWindow(vips, photo, w, h)
                let ix = max(0, min(ours.x, theirs.x) + w - max(ours.x, theirs.x))
                let iy = max(0, min(ours.y, theirs.y) + h - max(ours.y, theirs.y))
                let overlap = Double(ix * iy) / Double(w * h)
                print("smart crop \(name) \(w)x\(h): ours (\(ours.x), \(ours.y)), vips (\(theirs.x), \(theirs.y)), overlap \(String(format: "%.3f", overlap))")
                XCTAssertGreaterThanOrEqual(overlap, 0.85, "\(name) \(w)x\(h)")
            }
        }
    }

    /// vips's window: its attention centre (`--attention-x`, `--attention-y`) less half the
    /// window, kept inside the image, as vips_smartcrop places it.
    private func vipsWindow(_ vips: String, _ image: Image, _ w: Int, _ h: Int) throws -> (x: Int, y: Int) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-smartcrop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.png")
        try ImageEncoder.encode(image, as: .png()).write(to: input)
        let process = Process(), pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: vips)
        process.arguments = ["smartcrop", input.path, dir.appendingPathComponent("out.png").path, "\(w)", "\(h)",
                             "--interesting", "attention", "--attention-x", "--attention-y"]
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let numbers = output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard process.terminationStatus == 0, numbers.count == 2 else {
            throw ImageKitError.invalidArgument("vips smartcrop failed: \(output)")
        }
        return (min(max(numbers[0] - w / 2, 0), image.width - w), min(max(numbers[1] - h / 2, 0), image.height - h))
    }
}
