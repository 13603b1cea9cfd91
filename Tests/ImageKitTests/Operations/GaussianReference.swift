import Foundation
import ImageKit
import XCTest

/// The Gaussian blur and unsharp mask in plain Double arithmetic, written from their
/// definitions (not from the C core): kernel exp(-x²/2σ²) for |x| up to where it is 1 % of
/// its peak, normalised; edges extended; all four premultiplied channels alike.
enum GaussianReference {
    /// The normalised kernel, 2r + 1 weights.
    static func kernel(sigma: Double) -> [Double] {
        var radius = 0
        while exp(-Double((radius + 1) * (radius + 1)) / (2 * sigma * sigma)) >= 0.01 { radius += 1 }
        let w = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let sum = w.reduce(0, +)
        return w.map { $0 / sum }
    }

    /// Tightly packed premultiplied RGBA blurred, unrounded.
    static func blur(_ px: [UInt8], width: Int, height: Int, sigma: Double) -> [Double] {
        let w = kernel(sigma: sigma), r = w.count / 2
        var columns = [Double](repeating: 0, count: px.count)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<4 {
                    var s = 0.0
                    for k in -r...r {
                        let yy = min(height - 1, max(0, y + k))
                        s += w[k + r] * Double(px[(yy * width + x) * 4 + c])
                    }
                    columns[(y * width + x) * 4 + c] = s
                }
            }
        }
        var out = [Double](repeating: 0, count: px.count)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<4 {
                    var s = 0.0
                    for k in -r...r {
                        let xx = min(width - 1, max(0, x + k))
                        s += w[k + r] * columns[(y * width + xx) * 4 + c]
                    }
                    out[(y * width + x) * 4 + c] = s
                }
            }
        }
        return out
    }

    /// The unsharp mask (ic_op_sharpen.h's definition) of premultiplied RGBA, rounded.
    static func sharpen(_ px: [UInt8], width: Int, height: Int, sigma: Double, amount: Double,
                        threshold: Int) -> [UInt8] {
        let b = blur(px, width: width, height: height, sigma: sigma)
        var out = px
        for i in stride(from: 0, to: px.count, by: 4) where b[i + 3] > 0 {
            let a = Double(px[i + 3])
            for c in 0..<3 {
                let v = Double(px[i + c])
                let d = v - b[i + c] * a / b[i + 3]
                if abs(d) * 255 > Double(threshold) * a {
                    out[i + c] = UInt8(min(a, max(0, (v + amount * d + 0.5).rounded(.down))))
                }
            }
        }
        return out
    }

    /// PSNR in dB of 8-bit samples against exact ones (`channels` of every 4: 3 for colour only).
    static func psnr(_ a: [UInt8], _ b: [Double], channels: Int = 4) -> Double {
        var sum = 0.0, n = 0
        for i in 0..<a.count where i % 4 < channels {
            let d = Double(a[i]) - b[i]
            sum += d * d
            n += 1
        }
        return sum == 0 ? .infinity : 10 * log10(255 * 255 / (sum / Double(n)))
    }

    /// Largest difference between 8-bit samples and exact ones.
    static func maxDifference(_ a: [UInt8], _ b: [Double]) -> Double {
        zip(a, b).map { abs(Double($0) - $1) }.max() ?? 0
    }

    /// Premultiplied test pictures: SyntheticPhoto-like content from Pixels.pattern with noise,
    /// opaque or with a varied alpha including fully transparent areas.
    static func picture(width: Int, height: Int, alpha: Bool, seed: Int = 0) -> [UInt8] {
        var rng = SplitMix(seed: UInt64(seed + 1))
        var px = Pixels.pattern(width: width, height: height, alpha: alpha, seed: seed)
        for i in stride(from: 0, to: px.count, by: 4) {
            for c in 0..<3 { px[i + c] = UInt8(clamping: Int(px[i + c]) + Int(rng.next() % 41) - 20) }
            if alpha && (i / 4 % width) < width / 4 { px[i + 3] = 0 }
        }
        return Pixels.premultiplied(px)
    }
}

/// The `vips` command (libvips-tools) run on PNG files in a temporary directory.
enum VipsCommand {
    /// The path of `vips`, or nil when libvips-tools is not installed.
    static var path: String? {
        ["/usr/bin/vips", "/usr/local/bin/vips"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The shared corpus beside the project (`../shared/corpus`).
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }

    /// A real photo from the corpus (IJG's testorig.jpg, 227x149), decoded; skips when absent.
    static func photo() throws -> Image {
        let url = corpus.appendingPathComponent("libjpeg-turbo/testimages/testorig.jpg")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("the shared corpus is not beside the project (\(corpus.path))")
        }
        return try ImageDecoder().decode(Data(contentsOf: url))
    }

    /// Writes `image` as PNG, runs `vips <operation> in.png out.png <arguments>`, decodes out.png.
    static func run(_ operation: String, on image: Image, arguments: [String]) throws -> Image {
        guard let vips = path else {
            throw ImageKitError.invalidArgument("vips is not installed: `make deps` installs libvips-tools")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-vips-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.png"), output = dir.appendingPathComponent("out.png")
        try ImageEncoder.encode(image, as: .png()).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: vips)
        process.arguments = [operation, input.path, output.path] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ImageKitError.invalidArgument("vips \(operation) exited with \(process.terminationStatus)")
        }
        return try ImageDecoder().decode(Data(contentsOf: output))
    }

    /// PSNR in dB over the colour channels of two same-sized opaque images.
    static func colourPSNR(_ a: Image, _ b: Image) -> Double {
        GaussianReference.psnr(a.packedPixels(), b.packedPixels().map(Double.init), channels: 3)
    }
}
