@testable import ImageKit
import XCTest

/// The manager's one-pass URL reader (``URLKind``) on its own, against what `URL` says.
final class URLKindTests: XCTestCase {
    func testSchemesAreReadCaseInsensitively() {
        XCTAssertEqual(URLKind("http://example.com/a.png"), .web(hasHost: true))
        XCTAssertEqual(URLKind("HTTPS://example.com/a.png"), .web(hasHost: true))
        XCTAssertEqual(URLKind("HtTp://example.com"), .web(hasHost: true))
        XCTAssertEqual(URLKind("file:///tmp/a.png"), .file)
        XCTAssertEqual(URLKind("FILE:///tmp/a.png"), .file)
        XCTAssertEqual(URLKind("memory://images/a.png"), .other)
        XCTAssertEqual(URLKind("s3://bucket/a.png"), .other)
        XCTAssertEqual(URLKind("httpx://example.com"), .other, "a longer scheme is not http")
        XCTAssertEqual(URLKind("htt://example.com"), .other, "a shorter scheme is not http")
        XCTAssertEqual(URLKind("data:image/png;base64,AAAA"), .other)
        XCTAssertEqual(URLKind("no-colon-here"), .other)
        XCTAssertEqual(URLKind(""), .other)
    }

    func testTheAuthorityMustNameAHost() {
        XCTAssertEqual(URLKind("http://user:pw@example.com:8080/a"), .web(hasHost: true))
        XCTAssertEqual(URLKind("http://127.0.0.1:8080/a"), .web(hasHost: true))
        XCTAssertEqual(URLKind("http://[::1]:8080/a"), .web(hasHost: true))
        XCTAssertEqual(URLKind("http://example.com?q=1"), .web(hasHost: true))
        XCTAssertEqual(URLKind("http://example.com#f"), .web(hasHost: true))
        XCTAssertEqual(URLKind("http:///a.png"), .web(hasHost: false))
        XCTAssertEqual(URLKind("http://"), .web(hasHost: false))
        XCTAssertEqual(URLKind("http://user@/a"), .web(hasHost: false))
        XCTAssertEqual(URLKind("http://:8080/a"), .web(hasHost: false))
        XCTAssertEqual(URLKind("http://[]/a"), .web(hasHost: false))
        XCTAssertEqual(URLKind("http:example.com"), .web(hasHost: false), "no // : no authority")
        XCTAssertEqual(URLKind("http:/"), .web(hasHost: false))
    }

    func testItAgreesWithURLOnWebURLs() throws {
        let strings = ["http://a.example/x", "https://user@a.example:443/x?y#z", "http://[2001:db8::1]/",
                       "http:///x"]
        for string in strings {
            let url = try XCTUnwrap(URL(string: string), string)
            let host = url.host.map { !$0.isEmpty } ?? false
            XCTAssertEqual(URLKind(url.absoluteString), .web(hasHost: host), string)
        }
    }
}
