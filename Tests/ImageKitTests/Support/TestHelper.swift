import Foundation
import ImageKitTestSupport
import TestServers
import XCTest

/// The ImageKitTestHelper executable, built beside the test bundle, for what needs a process
/// of its own: disk-cache writers killed mid-write, the allocation probe, resident-memory
/// measurements. It prints its findings as one line of "key value" pairs.
enum TestHelper {
    /// The helper's path: beside the test bundle in the build directory.
    static var path: String {
        BuiltProducts.url("ImageKitTestHelper").path
    }

    /// Starts the helper with `arguments`; skips the test when the helper was not built.
    static func start(_ arguments: [String]) throws -> ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("\(path) is not there to run")
        }
        return try ChildProcess([path] + arguments)
    }

    /// Runs the helper to its end and returns the first line it printed (waiting at most
    /// `timeout` seconds for it).
    static func run(_ arguments: [String], timeout: Double = 600) throws -> String {
        let child = try start(arguments)
        defer { child.stop() }
        return try child.readLine(timeout: timeout)
    }

    /// "key value key value …" output as a dictionary.
    static func fields(_ line: String) -> [String: Int] {
        let words = line.split(separator: " ").map(String.init)
        var result: [String: Int] = [:]
        for i in stride(from: 0, to: words.count - 1, by: 2) { result[words[i]] = Int(words[i + 1]) }
        return result
    }
}
