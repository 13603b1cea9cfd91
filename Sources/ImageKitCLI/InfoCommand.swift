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
        abstract: "Print format, dimensions, frames and orientation read from headers alone.")

    @Argument(help: "Image files.")
    var files: [String]

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func run() throws {
        var failed = false
        for path in files {
            do {
                let info = try ImageDecoder.info(try readFile(path))
                if json {
                    print(Output.json([
                        "path": .string(path), "format": .string(info.format.description),
                        "width": .int(info.width), "height": .int(info.height),
                        "frames": .int(info.frameCount), "orientation": .int(info.orientation),
                        "alpha": .bool(info.hasAlpha), "bitDepth": .int(info.bitDepth),
                        "progressive": .bool(info.isProgressive),
                    ]))
                } else {
                    print([path, info.format.description, "\(info.width)x\(info.height)",
                           "\(info.frameCount)", "orientation=\(info.orientation)",
                           "alpha=\(info.hasAlpha ? 1 : 0)", "depth=\(info.bitDepth)",
                           "progressive=\(info.isProgressive ? 1 : 0)"].joined(separator: "\t"))
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
}
