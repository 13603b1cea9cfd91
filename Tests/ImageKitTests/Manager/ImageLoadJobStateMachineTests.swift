@testable import ImageKit
import XCTest

/// The pipeline's membership and stages on their own: who may join, when the last load
/// leaving stops the work, and who is handed the cached and the final result — with no task,
/// thread or socket.
final class ImageLoadJobStateMachineTests: XCTestCase {
    private final class Load {
        let name: String
        init(_ name: String) { self.name = name }
    }

    private typealias Machine = ImageLoadJobStateMachine<Load, String, Int>

    private func joined(_ action: Machine.AttachAction) -> String?? {
        if case .joined(let cached) = action { return .some(cached) }
        return nil
    }

    func testLoadsJoinWhileIdleAndRunningAndAllAreHandedTheResult() {
        var m = Machine()
        let a = Load("a"), b = Load("b"), c = Load("c")
        XCTAssertEqual(joined(m.attach(a)), .some(nil))
        XCTAssertEqual(m.stage, .idle)
        guard case .none = m.started(7) else { return XCTFail("a live job is not cancelled") }
        XCTAssertEqual(m.stage, .running)
        XCTAssertEqual(joined(m.attach(b)), .some(nil))
        XCTAssertEqual(joined(m.attach(c)), .some(nil))
        XCTAssertEqual(m.finish().map(\.name), ["a", "b", "c"])
        XCTAssertEqual(m.stage, .finished)
        XCTAssertTrue(m.waiters.isEmpty)
        guard case .rejected = m.attach(Load("late")) else { return XCTFail("a finished job takes no load") }
        XCTAssertTrue(m.finish().isEmpty, "a result is handed out once")
    }

    func testTheLastLoadLeavingStopsTheRunningTask() {
        var m = Machine()
        let a = Load("a"), b = Load("b")
        _ = m.attach(a)
        _ = m.started(42)
        _ = m.attach(b)
        guard case .none = m.detach(a) else { return XCTFail("b still waits") }
        XCTAssertEqual(m.stage, .running)
        guard case .stop(let handle) = m.detach(b) else { return XCTFail("the last load left") }
        XCTAssertEqual(handle, 42)
        XCTAssertEqual(m.stage, .cancelled)
        guard case .rejected = m.attach(Load("c")) else { return XCTFail("a cancelled job takes no load") }
        XCTAssertTrue(m.finish().isEmpty, "nobody is left to tell")
        XCTAssertEqual(m.stage, .cancelled)
    }

    func testLeavingBeforeTheTaskIsRecordedCancelsItOnceRecorded() {
        var m = Machine()
        let a = Load("a")
        _ = m.attach(a)
        guard case .stop(let handle) = m.detach(a) else { return XCTFail("the only load left") }
        XCTAssertNil(handle, "no task yet")
        guard case .cancel = m.started(9) else { return XCTFail("the task comes too late: cancel it") }
        XCTAssertEqual(m.stage, .cancelled)
    }

    func testATaskThatEndedBeforeItWasRecordedIsLeftAlone() {
        var m = Machine()
        _ = m.attach(Load("a"))
        XCTAssertEqual(m.finish().count, 1, "the task ran to its end first")
        guard case .none = m.started(5) else { return XCTFail("nothing to cancel") }
        XCTAssertEqual(m.stage, .finished)
    }

    func testLeavingAfterTheResultChangesNothing() {
        var m = Machine()
        let a = Load("a")
        _ = m.attach(a)
        _ = m.started(1)
        XCTAssertEqual(m.finish().count, 1)
        guard case .none = m.detach(a) else { return XCTFail("the result exists: nothing to stop") }
        XCTAssertEqual(m.stage, .finished)
    }

    func testARefreshedJobHandsItsCachedResultToLoadsPresentAndJoiningLater() {
        var m = Machine()
        let a = Load("a"), b = Load("b")
        _ = m.attach(a)
        _ = m.started(1)
        XCTAssertEqual(m.foundCached("cached").map(\.name), ["a"])
        XCTAssertEqual(joined(m.attach(b)), .some("cached"), "a load joining later is handed it at once")
        XCTAssertEqual(m.finish().map(\.name), ["a", "b"])
    }

    func testTheSameLoadLeavingTwiceIsHarmless() {
        var m = Machine()
        let a = Load("a"), b = Load("b")
        _ = m.attach(a)
        _ = m.attach(b)
        _ = m.started(3)
        guard case .none = m.detach(a) else { return XCTFail("b waits") }
        guard case .none = m.detach(a) else { return XCTFail("a already left; b waits") }
        XCTAssertEqual(m.waiters.map(\.name), ["b"])
    }
}
