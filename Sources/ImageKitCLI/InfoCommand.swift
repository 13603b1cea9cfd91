import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ImageKit

/// `imagekit info`: header facts without decoding.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print format, dimensions, frames, orientation and ICC profile read from headers.",
        discussion: """
            The profile column is `icc=none`, or `icc=SPACE:BYTES:VERDICT` where VERDICT says what \
            decoding does with it: `converts` (to sRGB), `srgb` (it describes sRGB: nothing to do) \
            or `ignored` (unusable: the image decodes as untagged). Finding the verdict decodes a \
            tiny thumbnail, only for files with a profile.
            """)

    @Argument(help: "Image files.")
    var files: [String]

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func run() throws {
        var failed = false
        for path in files {
            do {
                let data = try readFile(path)
                let info = try ImageDecoder.info(data)
                let profile = try Self.profileColumn(info, data)
                if json {
                    print(Output.json([
                        "path": .string(path), "format": .string(info.format.description),
                        "width": .int(info.width), "height": .int(info.height),
                        "frames": .int(info.frameCount), "orientation": .int(info.orientation),
                        "alpha": .bool(info.hasAlpha), "bitDepth": .int(info.bitDepth),
                        "progressive": .bool(info.isProgressive),
                        "icc": profile.map { .string($0) } ?? .null,
                    ]))
                } else {
                    print([path, info.format.description, "\(info.width)x\(info.height)",
                           "\(info.frameCount)", "orientation=\(info.orientation)",
                           "alpha=\(info.hasAlpha ? 1 : 0)", "depth=\(info.bitDepth)",
                           "progressive=\(info.isProgressive ? 1 : 0)",
                           "icc=\(profile ?? "none")"].joined(separator: "\t"))
                }
            } catch {
                failed = true
                let message = Output.oneLine("\(error)")
                print(json ? Output.json(["path": .string(path), "error": .bool(true), "message": .string(message)])
                           : [path, "error", message].joined(separator: "\t"))
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// `SPACE:BYTES:VERDICT` for a file with a profile, nil without one.
    static func profileColumn(_ info: ImageInfo, _ data: Data) throws -> String? {
        guard let space = info.iccProfileSpace else { return nil }
        let probe = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 8))).decode(data)
        let verdict = probe.isColorConverted ? "converts" : probe.isICCProfileIgnored ? "ignored" : "srgb"
        return "\(space.rawValue):\(info.iccProfileSize):\(verdict)"
    }
}
