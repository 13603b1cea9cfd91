@testable import ImageKit
import XCTest

/// The downloader's pending queue: lanes by priority, FIFO or LIFO within a lane, stale
/// entries skipped and dropped, entries that cannot start yet kept for later.
final class PendingQueueTests: XCTestCase {
    /// Entries the owner still considers queued: id → current sequence number.
    private var live: [UInt64: UInt64] = [:]
    private var queue = PendingQueue()
    private var nextSeq: UInt64 = 0

    override func setUp() {
        super.setUp()
        live = [:]
        queue = PendingQueue()
        nextSeq = 0
    }

    /// Queues (or re-queues, leaving the old entry stale) transfer `id` at `priority`.
    private func push(_ id: UInt64, _ priority: ImagePriority = .normal) {
        nextSeq += 1
        live[id] = nextSeq
        queue.push(PendingQueue.Entry(id: id, seq: nextSeq), priority: priority)
    }

    /// Pops one id the way the downloader does: a live entry that `canStart` accepts.
    private func pop(_ order: DownloaderConfiguration.ExecutionOrder = .fifo,
                     canStart: (UInt64) -> Bool = { _ in true }) -> UInt64? {
        let live = self.live
        let id = queue.pop(order: order, isLive: { live[$0.id] == $0.seq }, canStart: canStart)
        if let id { self.live[id] = nil }
        return id
    }

    /// Pops until the queue has nothing to give.
    private func drain(_ order: DownloaderConfiguration.ExecutionOrder = .fifo) -> [UInt64] {
        var out: [UInt64] = []
        while let id = pop(order) { out.append(id) }
        return out
    }

    func testHigherPriorityFirstThenArrivalOrder() {
        push(1, .low)
        push(2, .normal)
        push(3, .high)
        push(4, .normal)
        push(5, .high)
        XCTAssertEqual(drain(.fifo), [3, 5, 2, 4, 1])
    }

    func testLIFOTakesTheNewestOfEachLane() {
        push(1, .low)
        push(2, .normal)
        push(3, .high)
        push(4, .normal)
        push(5, .low)
        XCTAssertEqual(drain(.lifo), [3, 4, 2, 5, 1])
    }

    func testAnEmptyQueueGivesNothing() {
        XCTAssertNil(pop(.fifo))
        XCTAssertNil(pop(.lifo))
    }

    func testStaleEntriesAreSkipped() {
        push(1)
        push(2)
        push(3)
        live[2] = nil  // cancelled
        XCTAssertEqual(drain(.fifo), [1, 3])
        push(4)
        push(5)
        live[5] = nil
        XCTAssertEqual(drain(.lifo), [4])
    }

    func testARequeuedTransferMovesToItsNewLaneOnce() {
        push(1, .low)
        push(2, .normal)
        push(1, .high)  // raised: the low entry is stale now
        XCTAssertEqual(drain(.fifo), [1, 2], "1 once, from the high lane")
        push(3, .high)
        push(4, .normal)
        push(3, .low)  // lowered
        XCTAssertEqual(drain(.fifo), [4, 3])
    }

    func testEntriesThatCannotStartStayQueuedInOrder() {
        for id: UInt64 in 1...4 { push(id) }
        let blocked: Set<UInt64> = [1, 3]
        XCTAssertEqual(pop(.fifo) { !blocked.contains($0) }, 2)
        XCTAssertEqual(pop(.fifo) { !blocked.contains($0) }, 4)
        XCTAssertNil(pop(.fifo) { !blocked.contains($0) }, "only blocked entries are left")
        XCTAssertEqual(drain(.fifo), [1, 3], "and they are still there, in order")
        for id: UInt64 in 5...8 { push(id) }
        XCTAssertEqual(pop(.lifo) { $0 != 8 }, 7)
        XCTAssertEqual(drain(.lifo), [8, 6, 5])
    }

    func testABlockedHighEntryLetsALowerLanePass() {
        push(1, .high)
        push(2, .low)
        XCTAssertEqual(pop(.fifo) { $0 != 1 }, 2)
        XCTAssertEqual(pop(.fifo), 1)
    }

    func testLongRunsKeepOrderAcrossCompaction() {
        // Far more entries than the compaction threshold, interleaved with pops.
        var expected: [UInt64] = []
        var got: [UInt64] = []
        for id in UInt64(1)...500 {
            push(id)
            expected.append(id)
            if id % 3 == 0, let popped = pop(.fifo) { got.append(popped) }
        }
        got += drain(.fifo)
        XCTAssertEqual(got, expected)
    }
}
