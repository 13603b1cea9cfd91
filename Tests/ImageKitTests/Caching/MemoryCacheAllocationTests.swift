import XCTest

/// A memory-cache hit must not allocate, nor must the manager's synchronous look in an
/// ``ImageCache``'s memory tier through ``ImageCaching``. Checked in a child process whose
/// malloc, calloc, realloc and aligned allocations count per thread (see
/// Tests/CAllocCounter); sanitizer builds replace malloc themselves, so there
/// the check is skipped.
final class MemoryCacheAllocationTests: XCTestCase {
    func testHitsAndMissesDoNotAllocate() throws {
        let result = TestHelper.fields(try TestHelper.run(["alloc-probe"]))
        guard result["available"] == 1 else { throw XCTSkip("allocation counting is off in sanitizer builds") }
        XCTAssertEqual(result["hits"], 100_000)
        XCTAssertEqual(result["control-allocations"], 10, "the counter must see allocations")
        XCTAssertEqual(result["allocations"], 0, "allocations during 100 000 hits")
        XCTAssertEqual(result["miss-allocations"], 0, "allocations during 10 000 misses")
        XCTAssertEqual(result["caching-hits"], 100_000)
        XCTAssertEqual(result["caching-allocations"], 0,
                       "allocations during 100 000 hits of an ImageCache's memory tier through ImageCaching")
    }
}
