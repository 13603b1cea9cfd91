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

    func testInsertPrunesExpiredEntriesOnceTheListIsLarge() {
        let expired = FailedURLList(timeToLive: .zero)
        for i in 0..<1024 { expired.insert("u\(i)", error: .invalidURL("x")) }
        XCTAssertEqual(expired.count, 1024, "no pruning below the threshold")
        expired.insert("last", error: .invalidURL("x"))
        XCTAssertEqual(expired.count, 1, "every expired entry went, the new one stays")

        let lasting = FailedURLList(timeToLive: .seconds(3600))
        for i in 0..<1100 { lasting.insert("u\(i)", error: .invalidURL("x")) }
        XCTAssertEqual(lasting.count, 1100, "entries that have not expired are never pruned")
        XCTAssertNotNil(lasting.failure("u0"))
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
