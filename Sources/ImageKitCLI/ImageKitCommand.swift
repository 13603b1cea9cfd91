import ArgumentParser

/// The `imagekit` command-line tool.
@main
struct ImageKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagekit",
        abstract: "Decode, inspect, transform, fetch and benchmark images with ImageKit.",
        subcommands: [DecodeCommand.self, InfoCommand.self, ThumbnailCommand.self, TransformCommand.self, FetchCommand.self])
}
