import CAnchors
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// AVIF on a 12 MP photo-like picture (the pixels of the 12 MP JPEG input, encoded once by
/// ImageKit's AVIF encoder at quality 60, speed 8, and cached with the other inputs): full
/// decode and 256 px thumbnail against the bare libavif decode (avifDecoderRead +
/// avifImageYUVToRGB to RGBA8) in the same process, and encode time and size of AVIF, WebP
/// and JPEG at equal quality.
final class AVIFBenchmarks: BenchmarkCase {
    private static let width = 4000, height = 3000

    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    /// The 12 MP picture ImageKit decodes, as an opaque image.
    private static func picture() throws -> Image {
        try Image(width: width, height: height, frames: [SyntheticPhoto.rgba(width: width, height: height)])
    }

    /// The 12 MP AVIF input, made on first use and cached beside the other inputs.
    private static func input() throws -> [UInt8] {
        let url = BenchInputs.directory.appendingPathComponent("avif-12mp-q60.avif")
        if let data = try? Data(contentsOf: url) { return [UInt8](data) }
        print("[bench] making input avif-12mp-q60 (\(width)x\(height), first run only)")
        let data = try ImageEncoder.encode(try picture(), as: .avif(quality: 60, speed: 8))
        try FileManager.default.createDirectory(at: BenchInputs.directory, withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
        return [UInt8](data)
    }

    private func compare(section: String, decoder: ImageDecoder) throws {
        let bytes = try Self.input()
        let dst = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.width * Self.height * 4, alignment: 64)
        dst.initializeMemory(as: UInt8.self, repeating: 0x55)
        defer { dst.deallocate() }
        try bytes.withUnsafeBytes { bytes in
            try BenchRecorder.compare(
                self, section: section, name: "avif-12mp-q60", megapixels: 12,
                anchorName: "avifDecoderRead + avifImageYUVToRGB RGBA", target: 1.05,
                ours: { _ = try decoder.decode(bytes) },
                anchor: {
                    _ = anchors_avif_decode_into(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                                 dst.baseAddress!.assumingMemoryBound(to: UInt8.self), dst.count)
                })
        }
    }

    func testFullDecode() throws {
        try compare(section: "decode", decoder: ImageDecoder())
    }

    /// AV1 has no reduced-size decode: the thumbnail decodes the full picture, box-averages its
    /// YUV planes by 4 (to no less than twice the output), converts them and resamples.
    func testThumbnail256() throws {
        try compare(section: "thumbnail 256 px", decoder: ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256))))
    }

    /// PSNR in dB of `format`'s round trip of `image`.
    private static func psnr(_ image: Image, _ format: EncodeFormat) throws -> (psnr: Double, bytes: Int) {
        let data = try ImageEncoder.encode(image, as: format)
        let back = try ImageDecoder().decode(data)
        let a = image.packedPixels(), b = back.packedPixels()
        var sum = 0.0
        for i in stride(from: 0, to: a.count, by: 4) {
            for c in 0..<3 {
                let d = Double(a[i + c]) - Double(b[i + c])
                sum += d * d
            }
        }
        let mse = sum / Double(a.count / 4 * 3)
        return (mse == 0 ? 99 : 10 * log10(255 * 255 / mse), data.count)
    }

    /// The lowest quality (1…100) at which `make(quality)` reaches `target` dB on `sample`.
    private static func quality(reaching target: Double, on sample: Image,
                                _ make: (Int) -> EncodeFormat) throws -> Int {
        var low = 1, high = 100
        while low < high {
            let mid = (low + high) / 2
            if try psnr(sample, make(mid)).psnr >= target { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Encode time and size of the 12 MP picture in each format, at the quality each needs to
    /// reach 40 dB RGB PSNR (found on a 1000x750 crop of the picture); rows anchored on JPEG's time.
    /// WebP and AVIF take 1.5 to 2 s an encode here: 5 samples each rather than 10.
    func testEncodeAtEqualQuality() throws {
        let picture = try Self.picture()
        let sample = try ImageResizer.crop(picture, to: PixelRect(x: 1500, y: 1125, width: 1000, height: 750))
        let target = 40.0
        let formats: [(String, (Int) -> EncodeFormat)] = [
            ("JPEG (TurboJPEG 4:2:0)", { .jpeg(quality: $0) }),
            ("WebP (libwebp)", { .webp(quality: $0) }),
            ("AVIF (libaom, speed 8)", { .avif(quality: $0, speed: 8) }),
        ]
        var chosen: [(String, EncodeFormat, Int)] = []
        for (name, make) in formats {
            let q = try Self.quality(reaching: target, on: sample, make)
            chosen.append((name, make(q), q))
        }
        var jpegMs = 0.0, jpegBytes = 0
        for (index, (name, format, q)) in chosen.enumerated() {
            let (samples, _) = try BenchRecorder.time(self, inner: 1, useMeasure: index == 0, samples: 5,
                                                      ours: { _ = try ImageEncoder.encode(picture, as: format) })
            let (psnr, bytes) = try Self.psnr(picture, format)
            let ms = BenchRecorder.median(samples)
            if index == 0 { (jpegMs, jpegBytes) = (ms, bytes) }
            BenchRecorder.record(BenchResult(
                section: "encode 12 MP at \(Int(target)) dB", name: "\(name) q\(q)", medianMs: ms,
                minMs: samples.min() ?? 0, megapixels: 12, anchor: index == 0 ? nil : chosen[0].0,
                anchorMedianMs: index == 0 ? nil : jpegMs, ratio: index == 0 ? nil : ms / jpegMs,
                notes: ["bytes": Double(bytes), "size vs JPEG": Double(bytes) / Double(jpegBytes), "PSNR dB": psnr]))
        }
    }
}
