import ArgumentParser

/// The `imagekit` command-line tool.
@main
struct ImageKitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagekit",
        abstract: "Decode, inspect, fetch and benchmark images with ImageKit.",
        subcommands: [DecodeCommand.self, InfoCommand.self, ThumbnailCommand.self, FetchCommand.self])
}
