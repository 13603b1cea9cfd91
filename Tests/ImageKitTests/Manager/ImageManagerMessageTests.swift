import Foundation
import ImageKit
import XCTest

/// What a failed load says, against nginx on 127.0.0.1: its message names the URL without its
/// credentials or secret query values and cut short, the blocklist's message too, and the
/// client message names no URL or host at all.
final class ImageManagerMessageTests: ManagerTestCase {
    func testAFailedLoadNeverShowsTheURLsCredentials() async throws {
        let f = try fixture
        let m = try makeManager()
        let name = unique("missing")
        let url = try XCTUnwrap(URL(string: "http://user:secret@127.0.0.1:\(f.nginx.port)/\(name).png?token=t0ken&w=3"))
        let failedResult = await ManagerTesting.error(m, url)
        let failed = try XCTUnwrap(failedResult)
        XCTAssertEqual(failed.code, .httpStatus)
        XCTAssertEqual(failed.httpStatus, 404)
        let shown = "http://127.0.0.1:\(f.nginx.port)/\(name).png?token=REDACTED&w=3"
        XCTAssertEqual(failed.message, "HTTP status 404 from \(shown)")

        let againResult = await ManagerTesting.error(m, url)
        let again = try XCTUnwrap(againResult)
        XCTAssertEqual(again.code, .blocklisted)
        XCTAssertTrue(again.message.hasPrefix("\(shown) failed earlier"), again.message)
        for message in [failed.message, again.message] {
            XCTAssertFalse(message.contains("secret"), message)
            XCTAssertFalse(message.contains("user:"), message)
            XCTAssertFalse(message.contains("t0ken"), message)
        }

        XCTAssertEqual(failed.clientMessage, "the origin answered HTTP 404")
        XCTAssertEqual(again.clientMessage,
                       "the image failed recently and is not fetched again yet: the origin answered HTTP 404")
        for message in [failed.clientMessage, again.clientMessage] {
            XCTAssertFalse(message.contains("127.0.0.1"), message)
            XCTAssertFalse(message.contains("\(f.nginx.port)"), message)
        }
        await ManagerTesting.assertIdle(m)
    }

    func testALongURLIsCutInMessages() async throws {
        let f = try fixture
        let m = try makeManager()
        let name = unique("long") + String(repeating: "x", count: 60_000)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(f.nginx.port)/\(name)"))
        let failedResult = await ManagerTesting.error(m, url)
        let failed = try XCTUnwrap(failedResult)
        XCTAssertLessThan(failed.message.utf8.count, 400, "a 60 KB URL fills no message")
        XCTAssertTrue(failed.message.hasSuffix(" bytes)"), failed.message)
        let againResult = await ManagerTesting.error(m, url)
        let again = try XCTUnwrap(againResult)
        XCTAssertEqual(again.code, .blocklisted, "\(again.code)")
        XCTAssertLessThan(again.message.utf8.count, 1_000)
        await ManagerTesting.assertIdle(m)
    }

    func testRefusalsTellTheClientNoAddress() async throws {
        let f = try fixture
        let m = try makeManager(downloader: { $0.destinationPolicy = .publicOnly })
        let refusedResult = await ManagerTesting.error(m, f.nginx.url("/\(unique("internal")).png"))
        let refused = try XCTUnwrap(refusedResult)
        XCTAssertEqual(refused.code, .destinationRefused)
        XCTAssertTrue(refused.message.contains("127.0.0.1"), "the operator's message names the address")
        XCTAssertEqual(refused.clientMessage, "the image's address is not allowed")
        await ManagerTesting.assertIdle(m)
    }
}
