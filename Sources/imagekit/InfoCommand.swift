import ArgumentParser
import Foundation
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
                        "path": path, "format": info.format.description, "width": info.width,
                        "height": info.height, "frames": info.frameCount,
                        "orientation": info.orientation, "alpha": info.hasAlpha,
                        "bitDepth": info.bitDepth, "progressive": info.isProgressive,
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
                print(json ? Output.json(["path": path, "error": true, "message": message])
                           : [path, "error", message].joined(separator: "\t"))
            }
        }
        if failed { throw ExitCode(1) }
    }
}
