import Foundation
import ImageKit
import TestServers
import XCTest

/// nginx (HTTP/1.1, and HTTPS with HTTP/2) and the Python test server, with the
/// files and routes the downloader tests use.
final class LoopbackFixture: Sendable {
    let nginx: NginxServer
    let script: ScriptServer

    /// Bytes of the files nginx serves, by path.
    static let files: [String: [UInt8]] = [
        "small.png": pattern(2_000, seed: 1),
        "medium.bin": pattern(300_000, seed: 2),
        "page.html": Array("<html><body>not an image</body></html>\n".utf8),
        "gz/text.txt": Array(String(repeating: "ImageKit downloads compressible text. ", count: 2_000).utf8),
    ] + (0..<40).map { ("files/\($0).bin", pattern(5_000 + $0 * 97, seed: UInt64($0) + 10)) }

    static let locations = """
        location = /status/500 { return 500 "boom\\n"; }
        location = /r1 { return 302 /r2; }
        location = /r2 { return 301 /r3; }
        location = /r3 { return 307 /small.png; }
        location = /loop-a { return 302 /loop-b; }
        location = /loop-b { return 302 /loop-a; }
        location /gz/ { gzip on; gzip_types text/plain; gzip_min_length 1; }
    """

    /// Starts nginx (HTTP and HTTPS) serving `files` with `locations`, and the Python server.
    init(files: [String: [UInt8]] = LoopbackFixture.files, locations: String = LoopbackFixture.locations) throws {
        nginx = try NginxServer(files: files, locations: locations, tls: true)
        do {
            script = try ScriptServer()
        } catch {
            nginx.stop()
            throw error
        }
    }

    func stop() {
        nginx.stop()
        script.stop()
    }

    /// `count` deterministic bytes, different for each seed.
    static func pattern(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = Scrambler(seed: seed &* 0x9E37_79B9_7F4A_7C15)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// The Python server's `pattern(n)`: byte i is i % 251.
    static func scriptPattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8($0 % 251) }
    }
}

private func + (a: [String: [UInt8]], b: [(String, [UInt8])]) -> [String: [UInt8]] {
    a.merging(b) { x, _ in x }
}

/// Base of the downloader test classes: the loopback servers, started on first use
/// and stopped after each class.
class LoopbackTestCase: XCTestCase {
    static let servers = SharedServer(start: { try LoopbackFixture() }, stop: { $0.stop() })

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    var fixture: LoopbackFixture { get throws { try Self.servers.get() } }
}

/// Helpers shared by the downloader tests.
enum DownloadTesting {
    /// The test servers listen on 127.0.0.1: downloaders of the tests opt in to loopback.
    static let loopback = DestinationPolicy(allowsLoopback: true)

    /// A downloader allowed to reach loopback, with `configure` applied to the default configuration.
    static func downloader(_ configure: (inout DownloaderConfiguration) -> Void = { _ in }) throws -> Downloader {
        var c = DownloaderConfiguration()
        c.destinationPolicy = loopback
        configure(&c)
        return try Downloader(configuration: c)
    }

    /// The outcome of one async download.
    static func result(_ d: Downloader, _ request: DownloadRequest,
                       priority: ImagePriority = .normal) async -> Result<DownloadResult, ImageKitError> {
        do {
            return .success(try await d.download(request, priority: priority))
        } catch {
            return .failure(error)
        }
    }

    /// The error of a download expected to fail.
    static func error(_ d: Downloader, _ url: URL, file: StaticString = #filePath,
                      line: UInt = #line) async -> ImageKitError? {
        switch await result(d, DownloadRequest(url: url)) {
        case .success(let r):
            XCTFail("expected a failure, got status \(r.response.statusCode)", file: file, line: line)
            return nil
        case .failure(let e):
            return e
        }
    }

    /// Polls `condition` until it holds; fails the test after `timeout` seconds.
    static func waitUntil(_ what: String, timeout: Double = 15, file: StaticString = #filePath, line: UInt = #line,
                          _ condition: () throws -> Bool) async rethrows {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            if Date() > deadline {
                XCTFail("timed out waiting until \(what)", file: file, line: line)
                return
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until the downloader has nothing in flight, then checks every counter is zero.
    static func assertIdle(_ d: Downloader, file: StaticString = #filePath, line: UInt = #line) async {
        await waitUntil("the downloader is idle", file: file, line: line) { d.statistics.isIdle }
        let s = d.statistics
        XCTAssertTrue(s.isIdle, "not idle: \(s)", file: file, line: line)
        XCTAssertEqual(s.engineStarted, s.engineCompleted, file: file, line: line)
    }
}

/// Values collected from callbacks on other threads.
///
/// Guarded by NSLock (a pthread mutex) rather than `Mutex`, whose contended slow
/// path TSan cannot see.
final class Collector<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `values` is only read and written with `lock` held.
    private let lock = NSLock()
    private var values: [Value] = []

    func append(_ v: Value) {
        lock.lock()
        values.append(v)
        lock.unlock()
    }

    var all: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}

/// Deterministic pseudo-random numbers for test data and load tests (an xorshift sequence).
struct Scrambler {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
