import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ImageKit

/// `imagekit transform`: decode a file, run image operations in the order given, write a PNG.
struct TransformCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transform",
        abstract: "Run image operations on a file, in the order given, and write a PNG.",
        usage: "imagekit transform <input> -o <output.png> [--all-frames] [--max-pixels N] OPERATION...",
        discussion: """
            The operations run in the order of their flags, each on the previous one's result \
            (the same transformers a load's ImageContext takes, in one PipelineTransformer); a \
            flag may repeat. Prints the input, the pipeline's key and the result's size.

            Operations:
            \(TransformSteps.helpText)
            """)

    @Argument(help: "Image file.")
    var input: String

    @Option(name: .shortAndLong, help: "Write the result to OUT as PNG (an animation: its first frame).")
    var output: String

    @Flag(help: "Decode every frame of an animation and transform each alike.")
    var allFrames = false

    @Option(help: "Largest source image in pixels (default \(DecodeLimits().maxPixels)).")
    var maxPixels: Int?

    @Argument(parsing: .allUnrecognized, help: "Operations (see below), in order.")
    var operations: [String] = []

    func validate() throws {
        if operations.isEmpty { throw ValidationError("name at least one operation, e.g. --blur 2") }
    }

    /// Parses the operations here, not in `validate()`: an overlay's mark is decoded once.
    func run() throws {
        let pipeline = PipelineTransformer(try TransformSteps.parse(operations))
        var options = DecodeOptions(firstFrameOnly: !allFrames)
        if let maxPixels { options.limits.maxPixels = maxPixels }
        let image = try ImageDecoder(options: options).decode(try readFile(input))
        let result = try pipeline.transform(image)
        try ImageEncoder.encode(result, as: .png(), frame: result.frameCount > 1 ? 0 : nil).write(to: URL(fileURLWithPath: output))
        print("\(input)\t\(pipeline.key)\t\(result.width)x\(result.height)\t\(output)")
    }
}
