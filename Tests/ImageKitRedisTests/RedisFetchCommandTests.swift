import Foundation
import TestServers
import ImageKitTestSupport
import XCTest

/// `imagekit fetch --shared-cache`: two machines (two cache directories) sharing Redis.
final class RedisFetchCommandTests: RedisTestCase {
    /// Runs `imagekit fetch`; `output` is its standard output followed by its standard error
    /// (so a failure's message shows why, e.g. a sanitizer's report).
    private func fetch(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = BuiltProducts.imagekit
        process.arguments = ["fetch"] + arguments
        let errors = try temporaryDirectory("cli-stderr").appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errors.path])
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // Read through a FileHandle: String(contentsOf:) leaks its buffer for an empty file
        // (swift-foundation 6.3, reported by LeakSanitizer).
        let stderr = try FileHandle(forReadingFrom: errors).readToEnd() ?? Data()
        return (process.terminationStatus, String(decoding: data + stderr, as: UTF8.self))
    }

    func testASecondMachineIsServedByTheSharedTier() throws {
        let nodes = try (0..<2).map { _ in try startRedis() }
        let origin = try origin(count: 2)
        let urls = (0..<2).map { origin.url("/\($0).jpg").absoluteString }
        let shared = nodes.map(\.url).joined(separator: ",")

        let first = try fetch(["--cache", try temporaryDirectory("cli-a").path, "--shared-cache", shared,
                               "--size", "16", "--allow-loopback"] + urls)
        XCTAssertEqual(first.status, 0, first.output)
        XCTAssertTrue(first.output.contains("\nhits: memory 0, disk 0, shared 0, network 2\n"), first.output)

        let second = try fetch(["--cache", try temporaryDirectory("cli-b").path, "--shared-cache", shared,
                                "--size", "16", "--allow-loopback"] + urls)
        XCTAssertEqual(second.status, 0, second.output)
        XCTAssertTrue(second.output.contains("\(urls[0])\tdisk\t16x16\t"), second.output)
        XCTAssertTrue(second.output.contains("\nhits: memory 0, disk 0, shared 2, network 0\ndownloaded 0 bytes\n"),
                      second.output)
        for i in 0..<2 { XCTAssertEqual(requests(origin, "/\(i).jpg"), 1) }

        // All nodes gone: the loads go on from the origin.
        nodes.forEach { $0.stop() }
        let third = try fetch(["--cache", try temporaryDirectory("cli-c").path, "--shared-cache", shared,
                               "--size", "16", "--allow-loopback"] + urls)
        XCTAssertEqual(third.status, 0, third.output)
        XCTAssertTrue(third.output.contains("\nhits: memory 0, disk 0, shared 0, network 2\n"), third.output)

        let bad = try fetch(["--shared-cache", "http://x:1", urls[0]])
        XCTAssertNotEqual(bad.status, 0)
    }
}
