import Foundation

/// The package's executables, as the tests run them: `swift test` builds every product of the
/// package into the directory that holds the test bundle, so no test target depends on an
/// executable target.
public enum BuiltProducts {
    /// Where the executable `name` is: beside the test bundle.
    public static func url(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// The `imagekit` tool.
    public static var imagekit: URL { url("imagekit") }
}
