import CAnchors
import Foundation
@testable import ImageKit
import ImageKitTestSupport
import XCTest

/// Animated encoding on a built-in animation — 30 frames of 480×270, a window moving 8 pixels a
/// frame over the synthetic photo, 40 ms each — to GIF (ours: libimagequant palettes and our LZW)
/// against giflib with the same libimagequant settings in the same process (the frames all
/// change, so both write whole frames), and to animated WebP (WebPAnimEncoder, no bare anchor:
/// ours is the bare call plus un-premultiplying). Then the
/// `maxFileSize` search on the 960×720 photo: its cost against one encode, how many encodes it
/// ran, and how close to the budget its files land.
final class AnimatedEncodeBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private static let width = 480, height = 270, frameCount = 30, shift = 8

    /// The frames as straight RGBA (opaque, so the same bytes as premultiplied).
    private static let frames: [[UInt8]] = {
        let wide = width + shift * frameCount
        let photo = SyntheticPhoto.rgba(width: wide, height: height, seed: 11)
        return (0..<frameCount).map { i in
            var frame = [UInt8]()
            frame.reserveCapacity(width * height * 4)
            for y in 0..<height {
                let start = (y * wide + shift * i) * 4
                frame += photo[start..<(start + width * 4)]
            }
            return frame
        }
    }()

    private static let animation: Image = {
        guard let image = try? Image(width: width, height: height, frames: frames,
                                     delaysMilliseconds: Array(repeating: 40, count: frameCount))
        else { fatalError("the benchmark animation could not be made") }
        return image
    }()

    /// Timed at libimagequant speed 10 (its fastest, what a service encoding animations on request
    /// would pick); one encode at the default speed 4 is noted beside it.
    func testGIF() throws {
        let image = Self.animation
        let copies = Self.frames.map { f -> UnsafePointer<UInt8>? in
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: f.count)
            p.initialize(from: f, count: f.count)
            return UnsafePointer(p)
        }
        defer { copies.forEach { UnsafeMutablePointer(mutating: $0)?.deallocate() } }
        var ours = 0, anchor = 0
        // Our own 5 interleaved samples rather than XCTest's 10: each pair takes about 3 s.
        let (o, a) = try BenchRecorder.time(self, useMeasure: false, samples: 5, ours: {
            ours = try ImageEncoder.encode(image, as: .gif(speed: 10)).count
        }, anchor: {
            var out: UnsafeMutablePointer<UInt8>?
            var size = 0
            guard anchors_encode_gif_quantized(copies, Int32(Self.frameCount), Int32(Self.width), Int32(Self.height),
                                               4, 100, 10, 1, &out, &size) == 0 else {
                throw ImageKitError.encodeFailed("giflib + libimagequant anchor failed")
            }
            anchors_free(out)
            anchor = size
        })
        var defaultBytes = 0
        let defaultMs = try BenchRecorder.clock(1) { defaultBytes = try ImageEncoder.encode(image, as: .gif()).count }
        let om = BenchRecorder.median(o), am = BenchRecorder.median(a)
        BenchRecorder.record(BenchResult(
            section: "animated encode", name: "GIF speed 10 30x480x270", medianMs: om, minMs: o.min() ?? 0,
            megapixels: Double(Self.width * Self.height * Self.frameCount) / 1e6,
            anchor: "giflib+libimagequant", anchorMedianMs: am, ratio: om / am,
            notes: ["ms per frame": om / Double(Self.frameCount), "bytes": Double(ours),
                    "anchor bytes": Double(anchor), "speed 4 ms per frame": defaultMs / Double(Self.frameCount),
                    "speed 4 bytes": Double(defaultBytes)]))
    }

    /// Lossy WebP timed; lossless (about 15 times slower) encoded once, for its figures.
    func testWebP() throws {
        let image = Self.animation
        var lossy = 0, lossless = 0
        let (o, _) = try BenchRecorder.time(self, ours: {
            lossy = try ImageEncoder.encode(image, as: .webp()).count
        })
        let losslessMs = try BenchRecorder.clock(1) { lossless = try ImageEncoder.encode(image, as: .webpLossless).count }
        let m = BenchRecorder.median(o)
        BenchRecorder.record(BenchResult(
            section: "animated encode", name: "WebP q80 30x480x270", medianMs: m, minMs: o.min() ?? 0,
            megapixels: Double(Self.width * Self.height * Self.frameCount) / 1e6,
            notes: ["ms per frame": m / Double(Self.frameCount), "bytes": Double(lossy),
                    "lossless ms per frame": losslessMs / Double(Self.frameCount), "lossless bytes": Double(lossless)]))
    }

    /// The search at half the q85 JPEG's size against one encode; then how full the budget is,
    /// over budgets from 10 % to 90 % of the q85 size, for JPEG and WebP.
    func testMaxFileSizeSearch() throws {
        let photo = try ImageDecoder().decode(Data(BenchInputs.jpeg100KB.bytes))
        let full = try ImageEncoder.encode(photo, as: .jpeg()).count
        let budget = full / 2
        var encodes = 0
        let (o, a) = try BenchRecorder.time(self, inner: 1, ours: {
            encodes = try ImageEncoder.sizedEncode(photo, as: .jpeg(), maxFileSize: budget).encodes
        }, anchor: {
            _ = try ImageEncoder.encode(photo, as: .jpeg())
        })
        var notes = ["encodes": Double(encodes)]
        for format in [EncodeFormat.jpeg(), .webp(quality: 85)] {
            let top = try ImageEncoder.encode(photo, as: format).count
            var fill: [Double] = []
            for percent in stride(from: 10, through: 90, by: 5) {
                let b = top * percent / 100
                let result = try ImageEncoder.sizedEncode(photo, as: format, maxFileSize: b)
                XCTAssertLessThanOrEqual(result.data.count, b)
                fill.append(Double(result.data.count) / Double(b))
            }
            let name = format.imageFormat == .jpeg ? "JPEG" : "WebP"
            notes["\(name) fill mean %"] = 100 * fill.reduce(0, +) / Double(fill.count)
            notes["\(name) fill min %"] = 100 * (fill.min() ?? 0)
        }
        let om = BenchRecorder.median(o), am = BenchRecorder.median(a)
        BenchRecorder.record(BenchResult(
            section: "animated encode", name: "maxFileSize JPEG 960x720 at 50 %", medianMs: om, minMs: o.min() ?? 0,
            megapixels: Double(photo.width * photo.height) / 1e6, anchor: "one JPEG q85 encode",
            anchorMedianMs: am, ratio: om / am, notes: notes))
    }
}
