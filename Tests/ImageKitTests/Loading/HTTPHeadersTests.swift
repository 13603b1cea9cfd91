@testable import ImageKit
import XCTest

/// HTTPHeaders: order kept, repeated names kept, lookups ignoring ASCII case only.
final class HTTPHeadersTests: XCTestCase {
    private func pairs(_ h: HTTPHeaders) -> [String] { h.map { "\($0.name)=\($0.value)" } }

    func testLiteralKeepsOrderAndRepeats() {
        let h: HTTPHeaders = ["B": "1", "a": "2", "B": "3"]
        XCTAssertEqual(pairs(h), ["B=1", "a=2", "B=3"])
        XCTAssertEqual(h.count, 3)
    }

    func testLookupIgnoresASCIICase() {
        let h: HTTPHeaders = ["Content-Type": "image/png", "X-Twice": "1", "x-twice": "2"]
        XCTAssertEqual(h["content-type"], "image/png")
        XCTAssertEqual(h["CONTENT-TYPE"], "image/png")
        XCTAssertEqual(h["X-TWICE"], "1", "the first of several")
        XCTAssertEqual(h.values(for: "x-Twice"), ["1", "2"])
        XCTAssertTrue(h.contains("x-twice"))
        XCTAssertFalse(h.contains("Content-Typ"))
        XCTAssertFalse(h.contains("Content-Type2"))
        XCTAssertNil(h["missing"])
        XCTAssertEqual(h.values(for: "missing"), [])
    }

    func testOnlyASCIILettersFoldCase() {
        let h: HTTPHeaders = ["X-É": "1", "X-[": "2"]
        XCTAssertNil(h["x-é"], "non-ASCII letters are compared as bytes")
        XCTAssertEqual(h["x-É"], "1")
        XCTAssertNil(h["X-{"], "'[' and '{' differ by the case bit but are not letters")
        XCTAssertTrue(HTTPHeaders.same("ETag", "etag"))
        XCTAssertFalse(HTTPHeaders.same("ETag", "ETa"))
        XCTAssertFalse(HTTPHeaders.same("@", "`"))
    }

    func testSettingReplacesEveryFieldOfTheName() {
        var h: HTTPHeaders = ["Accept": "a", "X": "1", "accept": "b"]
        h["ACCEPT"] = "c"
        XCTAssertEqual(pairs(h), ["X=1", "ACCEPT=c"], "replaced fields go, the new one is appended")
        h["accept"] = nil
        XCTAssertEqual(pairs(h), ["X=1"])
    }

    func testAddKeepsEarlierFieldsAndRemoveTakesAll() {
        var h = HTTPHeaders()
        h.add(name: "Via", value: "1")
        h.add(name: "via", value: "2")
        h.add(name: "Other", value: "x")
        XCTAssertEqual(h.values(for: "VIA"), ["1", "2"])
        h.remove(name: "VIA")
        XCTAssertEqual(pairs(h), ["Other=x"])
        h.remove(name: "absent")
        XCTAssertEqual(h.count, 1)
    }

    func testFieldsInitializerAndEquality() {
        let fields = [HTTPHeaders.Field(name: "A", value: "1"), HTTPHeaders.Field(name: "B", value: "2")]
        XCTAssertEqual(HTTPHeaders(fields), ["A": "1", "B": "2"])
        XCTAssertNotEqual(HTTPHeaders(fields), ["B": "2", "A": "1"], "order is part of the value")
        XCTAssertEqual(HTTPHeaders(fields).fields, fields)
    }

    func testMergingReplacesByNameAndKeepsTheRest() {
        let defaults: HTTPHeaders = ["Accept": "image/*", "User-Agent": "ImageKit", "X-Keep": "k"]
        let request: HTTPHeaders = ["user-agent": "mine", "X-New": "n", "X-New": "m"]
        XCTAssertEqual(pairs(defaults.merging(request)),
                       ["Accept=image/*", "X-Keep=k", "user-agent=mine", "X-New=n", "X-New=m"])
        XCTAssertEqual(defaults.merging([:]), defaults)
        XCTAssertEqual(HTTPHeaders().merging(request), request)
    }
}
