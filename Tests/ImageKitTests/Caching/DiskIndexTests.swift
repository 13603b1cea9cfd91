@testable import ImageKit
import XCTest

/// The disk tier's index on its own: the running total, the merge of a directory scan
/// with what changed while it ran, and the order entries are evicted in.
final class DiskIndexTests: XCTestCase {
    private func entry(_ size: Int, _ accessed: Int64) -> DiskIndex.Entry {
        DiskIndex.Entry(size: size, accessed: accessed)
    }

    private func sizes(_ index: DiskIndex) -> [String: Int] { index.entries.mapValues(\.size) }

    func testRecordAndRemoveKeepTheTotal() {
        var index = DiskIndex()
        index.record("a", size: 10, accessed: 1)
        index.record("b", size: 5, accessed: 2)
        index.record("a", size: 30, accessed: 3)  // rewritten: replaces, does not add
        XCTAssertEqual(index.totalSize, 35)
        XCTAssertEqual(index.count, 2)
        XCTAssertTrue(index.remove("a"))
        XCTAssertFalse(index.remove("a"), "already gone")
        XCTAssertEqual(index.totalSize, 5)
        index.removeAll()
        XCTAssertEqual(index.totalSize, 0)
        XCTAssertEqual(index.count, 0)
    }

    func testAScanReplacesTheIndexAndKeepsTheLaterAccess() {
        var index = DiskIndex()
        index.record("known-newer", size: 1, accessed: 500)
        index.record("known-older", size: 1, accessed: 100)
        index.record("vanished", size: 7, accessed: 100)
        index.beginScan()
        index.finishScan(["known-newer": entry(4, 300), "known-older": entry(4, 300), "new": entry(9, 200)])
        XCTAssertEqual(sizes(index), ["known-newer": 4, "known-older": 4, "new": 9], "sizes come from the scan")
        XCTAssertEqual(index.entries["known-newer"]?.accessed, 500, "our later use wins")
        XCTAssertEqual(index.entries["known-older"]?.accessed, 300, "another process's later use wins")
        XCTAssertNil(index.entries["vanished"], "removed by someone else")
        XCTAssertEqual(index.totalSize, 17)
    }

    func testNamesChangedDuringTheScanKeepTheIndexView() {
        var index = DiskIndex()
        index.record("rewritten", size: 1, accessed: 10)
        index.record("removed", size: 2, accessed: 10)
        index.record("not-on-disk", size: 3, accessed: 10)
        index.beginScan()
        index.record("rewritten", size: 100, accessed: 50)
        index.remove("removed")
        index.record("written", size: 20, accessed: 60)
        // The scan read the directory before these changes.
        index.finishScan(["rewritten": entry(1, 10), "removed": entry(2, 10), "stale": entry(5, 10)])
        XCTAssertEqual(sizes(index), ["rewritten": 100, "written": 20, "stale": 5])
        XCTAssertEqual(index.totalSize, 125)
        // The scan is over: later changes are ordinary again.
        index.beginScan()
        index.finishScan([:])
        XCTAssertEqual(index.count, 0)
    }

    func testRemoveAllDuringTheScanWinsOverWhatTheScanSaw() {
        var index = DiskIndex()
        index.record("a", size: 1, accessed: 10)
        index.beginScan()
        index.removeAll()
        index.record("b", size: 2, accessed: 20)
        index.finishScan(["a": entry(1, 10), "b": entry(9, 5)])
        XCTAssertEqual(sizes(index), ["b": 2], "a was deleted with the directory; b is as written")
        XCTAssertEqual(index.totalSize, 2)
    }

    func testLeastRecentlyUsedGoFirstDownToTheTarget() {
        var index = DiskIndex()
        index.record("old", size: 10, accessed: 1)
        index.record("z-used-first", size: 10, accessed: 5)
        index.record("a-used-second", size: 10, accessed: 5)
        index.record("new", size: 10, accessed: 9)
        XCTAssertEqual(index.takeLeastRecentlyUsed(downTo: 40), [], "already at the target")
        XCTAssertEqual(index.takeLeastRecentlyUsed(downTo: 15), ["old", "z-used-first", "a-used-second"])
        XCTAssertEqual(Array(index.entries.keys), ["new"])
        XCTAssertEqual(index.totalSize, 10)
    }

    func testScannedEntriesWithEqualTimesGoByName() {
        var index = DiskIndex()
        index.beginScan()
        index.finishScan(["b": entry(1, 7), "a": entry(1, 7), "c": entry(1, 3)])
        XCTAssertEqual(index.takeLeastRecentlyUsed(downTo: 0), ["c", "a", "b"])
    }

    func testTakeAccessedBeforeACutoff() {
        var index = DiskIndex()
        index.record("a", size: 1, accessed: 99)
        index.record("b", size: 2, accessed: 100)
        index.record("c", size: 4, accessed: 101)
        XCTAssertEqual(index.takeAccessed(before: 100), ["a"])
        XCTAssertEqual(sizes(index), ["b": 2, "c": 4])
        XCTAssertEqual(index.totalSize, 6)
    }
}
