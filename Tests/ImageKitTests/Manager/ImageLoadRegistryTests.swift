@testable import ImageKit
import XCTest

/// Every decision of ``ImageLoadRegistry`` on its own, with strings for keys and waiters.
final class ImageLoadRegistryTests: XCTestCase {
    private final class Job {}
    private typealias Registry = ImageLoadRegistry<String, Job, String>

    func testTheFirstLoadReadsAndTheNextWaitUntilTheReadEnds() {
        var registry = Registry()
        XCTAssertEqual(registry.beginRead("a"), .read)
        XCTAssertEqual(registry.beginRead("a"), .wait)
        XCTAssertTrue(registry.wait(for: "a", "second"))
        XCTAssertTrue(registry.wait(for: "a", "third"))
        XCTAssertEqual(registry.beginRead("b"), .read, "another key reads on its own")
        XCTAssertEqual(registry.endRead("a"), ["second", "third"])
        XCTAssertEqual(registry.endRead("b"), [])
        XCTAssertEqual(registry.beginRead("a"), .read, "a read that ended is forgotten")
    }

    func testAWaiterArrivingAfterTheReadEndedIsTurnedAway() {
        var registry = Registry()
        XCTAssertEqual(registry.beginRead("a"), .read)
        XCTAssertEqual(registry.beginRead("a"), .wait)
        XCTAssertEqual(registry.endRead("a"), [])
        XCTAssertFalse(registry.wait(for: "a", "late"))
        XCTAssertEqual(registry.endRead("a"), [], "the late waiter was not kept")
    }

    func testALoadFindingAPipelineJoinsIt() {
        var registry = Registry()
        let job = Job()
        registry.jobs["a"] = job
        XCTAssertEqual(registry.beginRead("a"), .join)
        XCTAssertFalse(registry.wait(for: "a", "load"), "no read was recorded")
        registry.jobEnded(Job(), key: "a")
        XCTAssertTrue(registry.jobs["a"] === job, "another job's end leaves it")
        registry.jobEnded(job, key: "a")
        XCTAssertNil(registry.jobs["a"])
        XCTAssertEqual(registry.beginRead("a"), .read)
    }
}
