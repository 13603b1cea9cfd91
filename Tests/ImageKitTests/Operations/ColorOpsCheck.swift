import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// What the corner, tint, colour-adjust and pixelate tests share: test pictures, comparison
/// with a double-precision reference, and libvips's command-line tool.
enum ColorOpsCheck {
    /// A photo-like picture, opaque or with a soft vignette and a transparent corner.
    static func photo(width: Int = 96, height: Int = 64, alpha: Bool, seed: UInt64 = 3) throws -> Image {
        try Image(width: width, height: height,
                  frames: [SyntheticPhoto.rgba(width: width, height: height, seed: seed, alpha: alpha)],
                  premultiplied: false)
    }

    /// Three different 24x16 frames (one with transparency), 40, 50 and 60 ms, looping twice.
    static func animation() throws -> Image {
        let frames = (0..<3).map { i in
            SyntheticPhoto.rgba(width: 24, height: 16, seed: 10 + UInt64(i), alpha: i == 1)
        }
        return try Image(width: 24, height: 16, frames: frames, delaysMilliseconds: [40, 50, 60], loopCount: 2,
                         premultiplied: false)
    }

    /// The premultiplied samples of one frame, as doubles.
    static func samples(_ image: Image, frame: Int = 0) -> [Double] {
        image.packedPixels(frame: frame).map(Double.init)
    }

    /// The largest difference between `image`'s frame and the unrounded reference samples.
    static func maxError(_ image: Image, frame: Int = 0, reference: [Double]) -> Double {
        zip(image.packedPixels(frame: frame), reference).map { abs(Double($0) - $1) }.max() ?? 0
    }

    /// Fails unless every colour of every frame is at most its alpha (valid premultiplied pixels).
    static func assertPremultiplied(_ image: Image, file: StaticString = #filePath, line: UInt = #line) {
        for frame in 0..<image.frameCount {
            let px = image.packedPixels(frame: frame)
            let bad = stride(from: 0, to: px.count, by: 4).first { (i: Int) -> Bool in
                max(px[i], px[i + 1], px[i + 2]) > px[i + 3]
            }
            XCTAssertNil(bad, "frame \(frame): a colour above its alpha at byte \(bad ?? 0)", file: file, line: line)
        }
    }

    /// Fails unless `transformer` treats every frame of an animation as it treats that frame
    /// alone, and keeps the frame delays and loop count.
    static func assertFramesAlike(_ transformer: some ImageTransformer, file: StaticString = #filePath,
                                  line: UInt = #line) throws {
        let animation = try animation()
        let out = try transformer.transform(animation)
        XCTAssertEqual(out.frameCount, 3, file: file, line: line)
        XCTAssertEqual(out.frameDelays, [40, 50, 60], file: file, line: line)
        XCTAssertEqual(out.loopCount, 2, file: file, line: line)
        for frame in 0..<3 {
            let alone = try Image(width: animation.width, height: animation.height,
                                  premultipliedRGBA: animation.packedPixels(frame: frame))
            XCTAssertEqual(out.packedPixels(frame: frame), try transformer.transform(alone).packedPixels(),
                           "frame \(frame)", file: file, line: line)
        }
    }

    /// Fails unless the keys are pairwise distinct.
    static func assertDistinct(_ keys: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Set(keys).count, keys.count, "keys collide: \(keys)", file: file, line: line)
    }

    /// PSNR in dB between two same-sized frames 0, over all four channels.
    static func psnr(_ a: Image, _ b: Image) -> Double {
        Quality.psnr(a, b)
    }

    /// Runs `vips OPERATION in.png out.png ARGUMENTS…` on `image` (written as PNG) and decodes
    /// the result.
    static func vips(_ image: Image, _ operation: String, _ arguments: [String]) throws -> Image {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.png"), output = dir.appendingPathComponent("out.png")
        try ImageEncoder.encode(image, as: .png()).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/vips")
        process.arguments = [operation, input.path, output.path] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "vips \(operation) failed")
        return try ImageDecoder().decode(Data(contentsOf: output))
    }
}
