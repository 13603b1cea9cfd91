import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import ImageKit

/// `imagekit thumbnail`: shrink on load to a box, write the result or time it.
struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Decode a file straight to a thumbnail (shrink on load).",
        discussion: """
            Without -o prints the thumbnail's size. With --bench N decodes the file N times \
            from memory to the final bitmap (no encode) and prints the median and minimum ms \
            and the peak resident memory of the process.
            """)

    @Argument(help: "Image file.")
    var input: String

    @Option(help: "Box in pixels: 256 (square) or 320x200; a side of 0 is unconstrained.")
    var size: String

    @Flag(help: "Fill the box exactly (scale to cover, crop the part --gravity names) instead of fitting inside it.")
    var fill = false

    @Option(help: """
        With --fill, the part kept: center (default), north, northeast, east, southeast, south, \
        southwest, west, northwest, focus(X,Y) (fractions 0...1) or smart (the most interesting part).
        """)
    var gravity: String?

    @Flag(help: "Keep the source's colours instead of converting images with an ICC profile to sRGB.")
    var rawColor = false

    @Option(name: .shortAndLong, help: "Write the thumbnail to OUT (.jpg, .png, .webp, .avif or .gif).")
    var output: String?

    @Option(help: "JPEG, WebP or AVIF quality (default \(ThumbnailCommand.defaultQualities)). GIF: palette quality (default 100).")
    var quality: Int?

    @Flag(help: "Decode every frame of an animation; a .gif or .webp output is then animated.")
    var allFrames = false

    @Option(help: "Largest output file in bytes (lower quality, then smaller dimensions).")
    var maxFileSize: Int?

    @Option(help: "Largest source image in pixels (default \(DecodeLimits().maxPixels)).")
    var maxPixels: Int?

    @Option(help: "Thumbnail the file N times from memory and print timings and peak memory.")
    var bench: Int?

    /// The encoders' default JPEG, WebP and AVIF qualities, "85 / 80 / 60", for the help text.
    static var defaultQualities: String {
        var jpeg = 0, webp = 0, avif = 0
        if case .jpeg(let quality, _, _) = EncodeFormat.jpeg() { jpeg = quality }
        if case .webp(let quality) = EncodeFormat.webp() { webp = quality }
        if case .avif(let quality, _, _) = EncodeFormat.avif() { avif = quality }
        return "\(jpeg) / \(webp) / \(avif)"
    }

    func validate() throws {
        _ = try box()
        _ = try placement()
        if let bench, bench <= 0 { throw ValidationError("--bench needs a positive count") }
        if let output, EncodeFormat(pathExtension: URL(fileURLWithPath: output).pathExtension) == nil {
            throw ValidationError("-o must end in .jpg, .jpeg, .png, .webp, .avif or .gif")
        }
        if let maxFileSize, maxFileSize <= 0 { throw ValidationError("--max-file-size needs a positive byte count") }
    }

    /// Peak resident memory of this process image in KB: VmHWM, which (unlike
    /// getrusage's ru_maxrss) starts afresh at exec, so a parent's size never shows.
    static func peakResidentKB() -> Int {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kb = Int(line.split(separator: " ").dropFirst().first ?? "") {
            return kb
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }

    /// The --gravity option, center when absent; it needs --fill.
    private func placement() throws -> Gravity {
        guard let gravity else { return .center }
        guard let parsed = Gravity(key: gravity.lowercased()) else {
            throw ValidationError("--gravity must be center, north, …, northwest, focus(X,Y) with X and Y in 0...1, or smart")
        }
        guard fill else { throw ValidationError("--gravity needs --fill") }
        return parsed
    }

    private func box() throws -> PixelSize {
        let parts = size.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let w = Int(parts[0]), w >= 0 else {
            throw ValidationError("--size must look like 256 or 320x200")
        }
        let h = parts.count == 2 ? Int(parts[1]) : w
        guard let h, h >= 0, w > 0 || h > 0 else { throw ValidationError("--size must look like 256 or 320x200") }
        return PixelSize(width: w, height: h)
    }

    func run() throws {
        var options = DecodeOptions(firstFrameOnly: !allFrames, thumbnailPixelSize: try box(),
                                    thumbnailMode: fill ? .fill : .fit, thumbnailGravity: try placement(),
                                    colorMode: rawColor ? .raw : .sRGB)
        if let maxPixels { options.limits.maxPixels = maxPixels }
        let decoder = ImageDecoder(options: options)
        let data = try readFile(input)
        if let bench {
            let stats = try Output.timeDecodes(decoder, data, count: bench)
            let rss = Output.fixed(Double(Self.peakResidentKB()) / 1024, 1)
            print("\(input)\tmedian \(Output.fixed(stats.median)) ms\tmin \(Output.fixed(stats.min)) ms\tpeak RSS \(rss) MB\t(\(bench) thumbnails)")
            return
        }
        let image = try decoder.decode(data)
        if let output {
            var format = EncodeFormat(pathExtension: URL(fileURLWithPath: output).pathExtension)!
            if let quality {
                switch format {
                case .jpeg: format = .jpeg(quality: quality)
                case .webp: format = .webp(quality: quality)
                case .avif: format = .avif(quality: quality)
                case .gif: format = .gif(quality: quality)
                default: break
                }
            }
            let encoded = try EncodedImage(data: ImageEncoder.encode(image, as: format, maxFileSize: maxFileSize))
            try encoded.data.write(to: URL(fileURLWithPath: output))
            let frames = image.frameCount > 1 ? "\t\(image.frameCount) frames" : ""
            print("\(input)\t\(image.sourceFormat)\t\(encoded.pixelSize.width)x\(encoded.pixelSize.height)\t\(output)"
                  + frames)
            return
        }
        print("\(input)\t\(image.sourceFormat)\t\(image.width)x\(image.height)")
    }
}
