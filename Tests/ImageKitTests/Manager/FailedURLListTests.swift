@testable import ImageKit
import XCTest

/// The manager's blocklist on its own. Expiry is checked with time-to-live values that
/// cannot be reached either way during a test (zero: expired at once; an hour: never),
/// so no assertion depends on how long the test takes.
final class FailedURLListTests: XCTestCase {
    func testAListedURLReturnsItsFailure() {
        let list = FailedURLList(timeToLive: .seconds(3600))
        list.insert("http://h.test/a", error: .httpStatus(404, "not found"))
        XCTAssertEqual(list.failure("http://h.test/a"), .httpStatus(404, "not found"))
        XCTAssertTrue(list.contains("http://h.test/a"))
        XCTAssertNil(list.failure("http://h.test/b"))
        XCTAssertFalse(list.contains("http://h.test/A"), "URLs are compared exactly")
    }

    func testListingAgainReplacesTheFailure() {
        let list = FailedURLList(timeToLive: .seconds(3600))
        list.insert("u", error: .httpStatus(404, "a"))
        list.insert("u", error: .httpStatus(410, "b"))
        XCTAssertEqual(list.failure("u"), .httpStatus(410, "b"))
        XCTAssertEqual(list.count, 1)
    }

    func testAnExpiredEntryIsDroppedWhenLookedUp() {
        let list = FailedURLList(timeToLive: .zero)
        list.insert("u", error: .invalidURL("x"))
        XCTAssertEqual(list.count, 1, "kept until looked up")
        XCTAssertNil(list.failure("u"))
        XCTAssertEqual(list.count, 0)
    }

    func testInsertDropsExpiredEntries() {
        let expired = FailedURLList(timeToLive: .zero)
        for i in 0..<100 { expired.insert("u\(i)", error: .invalidURL("x")) }
        XCTAssertEqual(expired.count, 1, "each insert drops the expired entries before it")

        let lasting = FailedURLList(timeToLive: .seconds(3600))
        for i in 0..<1100 { lasting.insert("u\(i)", error: .invalidURL("x")) }
        XCTAssertEqual(lasting.count, 1100, "entries that have not expired stay while there is room")
        XCTAssertNotNil(lasting.failure("u0"))
    }

    func testTheListIsBoundedByCountAndOldestEntriesGoFirst() {
        let list = FailedURLList(timeToLive: .seconds(3600), maxCount: 100, maxBytes: 1 << 30)
        for i in 0..<1000 { list.insert("http://h.test/\(i)", error: .httpStatus(404, "not found")) }
        XCTAssertEqual(list.count, 100)
        XCTAssertNil(list.failure("http://h.test/0"), "the oldest entry went")
        XCTAssertNil(list.failure("http://h.test/899"))
        XCTAssertNotNil(list.failure("http://h.test/900"))
        XCTAssertNotNil(list.failure("http://h.test/999"))

        // Listing a URL again makes it the newest.
        list.insert("http://h.test/900", error: .httpStatus(410, "gone"))
        list.insert("http://h.test/new", error: .httpStatus(404, "not found"))
        XCTAssertEqual(list.failure("http://h.test/900"), .httpStatus(410, "gone"))
        XCTAssertNil(list.failure("http://h.test/901"), "the oldest entry after it went instead")
        XCTAssertEqual(list.count, 100)
    }

    func testLongURLsCostNoMemoryAndMessagesAreCountedInBytes() {
        let cap = 64 * 1024
        let list = FailedURLList(timeToLive: .seconds(3600), maxCount: 10_000, maxBytes: cap)
        let long = String(repeating: "n", count: 60_000)
        for i in 0..<3000 {
            let url = "http://h.test/\(i)/\(long)"
            list.insert(url, error: .httpStatus(404, "HTTP status 404 from \(MessageURL.describe(url))"))
        }
        XCTAssertLessThanOrEqual(list.bytes, cap)
        XCTAssertGreaterThan(list.count, 50)
        XCTAssertLessThan(list.count, 3000)
        XCTAssertNotNil(list.failure("http://h.test/2999/\(long)"), "the newest entry is found by its URL")
        XCTAssertNil(list.failure("http://h.test/0/\(long)"), "the oldest went")

        let huge = String(repeating: "m", count: cap)
        list.insert("http://h.test/huge", error: .invalidResponse(huge))
        XCTAssertNil(list.failure("http://h.test/huge"), "a failure larger than the whole bound is not listed")
        XCTAssertLessThanOrEqual(list.bytes, cap)
        XCTAssertNotNil(list.failure("http://h.test/2999/\(long)"), "and pushed nothing out")
    }

    func testRemovedAndReinsertedEntriesKeepTheAccountsRight() {
        let list = FailedURLList(timeToLive: .seconds(3600), maxCount: 10, maxBytes: 1 << 30)
        for round in 0..<500 {
            list.insert("a\(round % 20)", error: .invalidURL("x"))
            if round % 3 == 0 { list.remove("a\((round + 7) % 20)") }
        }
        XCTAssertLessThanOrEqual(list.count, 10)
        XCTAssertEqual(list.bytes, list.count * (FailedURLList.entryOverhead + 1))
        list.removeAll()
        XCTAssertEqual(list.bytes, 0)
        XCTAssertEqual(list.count, 0)
    }

    func testAHugeTimeToLiveDoesNotWrapAround() {
        let list = FailedURLList(timeToLive: .seconds(Int64.max))
        list.insert("u", error: .invalidURL("x"))
        XCTAssertNotNil(list.failure("u"), "the expiry saturates instead of overflowing into the past")
    }

    func testRemoveAndRemoveAll() {
        let list = FailedURLList(timeToLive: .seconds(3600))
        list.insert("a", error: .invalidURL("x"))
        list.insert("b", error: .invalidURL("x"))
        list.remove("a")
        XCTAssertNil(list.failure("a"))
        XCTAssertNotNil(list.failure("b"))
        list.removeAll()
        XCTAssertEqual(list.count, 0)
        XCTAssertNil(list.failure("b"))
    }
}
