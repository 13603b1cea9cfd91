import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ImageKit
#if canImport(Glibc)
import Glibc
#endif

/// `imagekit decode`: decodes files and prints one line per file, or times decodes.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode files to premultiplied RGBA8.",
        discussion: """
            Prints one line per file: path, format, WxH, frames and, with --sha256, the SHA-256 \
            of frame 0's premultiplied RGBA pixels (rows tightly packed); or path, "error" and \
            the message. Exits 1 if any file failed.
            """)

    @Argument(help: "Image files.")
    var files: [String]

    @Flag(help: "Print the SHA-256 of frame 0's premultiplied RGBA pixels.")
    var sha256 = false

    @Flag(help: "Print one JSON object per line instead of tab-separated fields.")
    var json = false

    @Flag(help: "Decode every frame of animations (composited).")
    var allFrames = false

    @Option(help: "Largest image in pixels (default \(DecodeLimits().maxPixels)).")
    var maxPixels: Int?

    @Option(help: "Most memory one decode may hold, in bytes (default \(DecodeLimits().maxMemoryBytes)).")
    var maxMemory: Int?

    @Flag(help: "Keep the stored orientation instead of applying EXIF orientation.")
    var keepOrientation = false

    @Flag(help: "Keep the source's colours instead of converting images with an ICC profile to sRGB.")
    var rawColor = false

    @Option(help: "Decode the (single) file N times from memory and print the median and minimum ms.")
    var bench: Int?

    func validate() throws {
        if let bench {
            guard bench > 0 else { throw ValidationError("--bench needs a positive count") }
            guard files.count == 1 else { throw ValidationError("--bench takes exactly one file") }
        }
        if let maxPixels, maxPixels <= 0 { throw ValidationError("--max-pixels must be positive") }
        if let maxMemory, maxMemory <= 0 { throw ValidationError("--max-memory must be positive") }
    }

    func run() throws {
        var options = DecodeOptions(firstFrameOnly: !allFrames, applyOrientation: !keepOrientation,
                                    colorMode: rawColor ? .raw : .sRGB)
        if let maxPixels { options.limits.maxPixels = maxPixels }
        if let maxMemory { options.limits.maxMemoryBytes = maxMemory }
        let decoder = ImageDecoder(options: options)
        if let bench {
            try runBench(decoder: decoder, path: files[0], iterations: bench)
            return
        }
        var failed = false
        for path in files {
            let line: String
            do {
                let data = try readFile(path)
                let image = try decoder.decode(data)
                let frames = allFrames ? image.frameCount : ((try? ImageDecoder.info(data).frameCount) ?? 1)
                let digest = sha256 ? PixelDigest.sha256Hex(of: image) : nil
                line = json
                    ? Output.json(["path": .string(path), "format": .string(image.sourceFormat.description),
                                   "width": .int(image.width), "height": .int(image.height),
                                   "frames": .int(frames), "sha256": digest.map { .string($0) } ?? .null])
                    : ([path, image.sourceFormat.description, "\(image.width)x\(image.height)", "\(frames)"]
                        + (digest.map { [$0] } ?? [])).joined(separator: "\t")
            } catch {
                failed = true
                let message = Output.oneLine("\(error)")
                line = json
                    ? Output.json(["path": .string(path), "error": .bool(true), "message": .string(message)])
                    : [path, "error", message].joined(separator: "\t")
            }
            print(line)
        }
        if failed { throw ExitCode(1) }
    }

    private func runBench(decoder: ImageDecoder, path: String, iterations: Int) throws {
        let stats = try Output.timeDecodes(decoder, try readFile(path), count: iterations)
        print("\(path)\tmedian \(Output.fixed(stats.median)) ms\tmin \(Output.fixed(stats.min)) ms\t(\(iterations) decodes)")
    }
}

/// Reads a whole file, with a readable error.
func readFile(_ path: String) throws -> Data {
    do {
        return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    } catch {
        // Foundation's error prints as a dictionary dump; the system's reason is what a user needs.
        let reason = ((error as? CocoaError)?.userInfo["NSUnderlyingError"] as? POSIXError)
            .map { String(cString: strerror($0.code.rawValue)) } ?? "\(error)"
        throw ImageKitError.io("cannot read \(path): \(reason)")
    }
}
