import Foundation
import ImageKit
import TestServers
import XCTest

/// Kept-alive connections against the Python server: bytes an origin sends past its
/// Content-Length never become another request's response (libcurl 7.x would read them as
/// the next answer on that connection), and well-behaved connections are still reused.
final class ConnectionReuseTests: LoopbackTestCase {
    private func download(_ d: Downloader, _ url: URL, file: StaticString = #filePath,
                          line: UInt = #line) async throws -> DownloadResult {
        switch await DownloadTesting.result(d, DownloadRequest(url: url)) {
        case .success(let r): return r
        case .failure(let e):
            XCTFail("\(url) failed: \(e)", file: file, line: line)
            throw e
        }
    }

    func testBytesPastTheContentLengthNeverAnswerTheNextRequest() async throws {
        let f = try fixture
        // One connection to the host, so every request goes over the same one when it is reused.
        let d = try DownloadTesting.downloader { $0.maxConcurrentDownloadsPerHost = 1 }

        let first = try await download(d, f.script.url("/bytes?n=200"))
        XCTAssertEqual(first.metrics.newConnections, 1)
        let overlong = try await download(d, f.script.url("/overlong?n=500&ms=20"))
        XCTAssertEqual(Array(overlong.data), LoopbackFixture.scriptPattern(500))
        XCTAssertEqual(overlong.metrics.newConnections, 0, "a well-behaved response leaves its connection for reuse")
        // The unasked-for response is in the connection's socket by now.
        try await Task.sleep(for: .milliseconds(300))

        let next = try await download(d, f.script.url("/bytes?n=300"))
        XCTAssertEqual(Array(next.data), LoopbackFixture.scriptPattern(300),
                       "the next request got the bytes left in the connection: "
                           + String(decoding: next.data, as: UTF8.self))
        XCTAssertEqual(next.metrics.newConnections, 1, "the request went over a new connection")

        // That new connection is well-behaved: it is reused.
        let after = try await download(d, f.script.url("/bytes?n=100"))
        XCTAssertEqual(Array(after.data), LoopbackFixture.scriptPattern(100))
        XCTAssertEqual(after.metrics.newConnections, 0)
        await DownloadTesting.assertIdle(d)
    }
}
