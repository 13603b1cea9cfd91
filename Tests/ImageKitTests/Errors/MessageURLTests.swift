import Foundation
import ImageKit
import XCTest

/// How URLs read in messages and logs: no user part, no secret query values, no fragment,
/// and never longer than MessageURL.maxLength bytes plus the length.
final class MessageURLTests: XCTestCase {
    func testTheUserPartIsRemoved() {
        XCTAssertEqual(MessageURL.describe("http://user:secret@images.internal:8080/a.png"),
                       "http://images.internal:8080/a.png")
        XCTAssertEqual(MessageURL.describe("https://token@host/a.png"), "https://host/a.png")
        XCTAssertEqual(MessageURL.describe("http://a:b@c@host/x@y.png"), "http://host/x@y.png",
                       "everything up to the authority's last @ is the user part; an @ in the path is kept")
        XCTAssertEqual(MessageURL.describe(URL(string: "http://u:p@h.test/a?w=3")!), "http://h.test/a?w=3")
        XCTAssertEqual(MessageURL.describe("redis://:pass@cache:6379"), "redis://cache:6379")
    }

    func testSecretQueryValuesAreReplaced() {
        XCTAssertEqual(
            MessageURL.describe("https://b.s3.test/k.png?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc&w=300"
                + "&access_token=t"),
            "https://b.s3.test/k.png?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&w=300"
                + "&access_token=REDACTED")
        XCTAssertEqual(MessageURL.describe("http://h/a?sig=1&api_key=2&Password=3&flag&format=webp"),
                       "http://h/a?sig=REDACTED&api_key=REDACTED&Password=REDACTED&flag&format=webp")
    }

    func testTheFragmentIsDropped() {
        XCTAssertEqual(MessageURL.describe("http://h/a.png#access_token=abc"), "http://h/a.png")
    }

    func testLongURLsAreCut() {
        let url = "http://h.test/" + String(repeating: "x", count: 60_000)
        let shown = MessageURL.describe(url)
        XCTAssertEqual(shown, String(url.prefix(MessageURL.maxLength)) + "… (60014 bytes)")
        let query = "http://h.test/a?" + (0..<20_000).map { "token\($0)=v" }.joined(separator: "&")
        let cutQuery = MessageURL.describe(query)
        XCTAssertTrue(cutQuery.hasPrefix("http://h.test/a?token0=REDACTED&token1=REDACTED&"), cutQuery)
        XCTAssertLessThan(cutQuery.utf8.count, MessageURL.maxLength + 40)
        // A cut never splits a character's bytes.
        let wide = "http://h.test/" + String(repeating: "\u{e9}", count: 300)
        let whole = "http://h.test/" + String(repeating: "\u{e9}", count: 93) + "…"
        XCTAssertTrue(MessageURL.describe(wide).hasPrefix(whole))
        let short = "http://h.test/a.png"
        XCTAssertEqual(MessageURL.describe(short), short)
    }

    func testOtherTextIsOnlyCut() {
        XCTAssertEqual(MessageURL.describe("not a url"), "not a url")
        XCTAssertEqual(MessageURL.describe("file:///tmp/a.png"), "file:///tmp/a.png")
        XCTAssertEqual(MessageURL.describe(""), "")
    }
}
