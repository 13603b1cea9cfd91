import Foundation
@testable import ImageKit
import XCTest

/// The downloader's state machine on its own: each transition and the action it returns,
/// with no engine, thread or socket. Completions handed to the machine record who was
/// called with what; the tests call them as the core would.
final class DownloaderStateMachineTests: XCTestCase {
    private typealias Machine = DownloaderStateMachine

    /// A machine plus the bookkeeping a test needs: named callers and their completions.
    private struct Harness {
        var machine: Machine
        /// (caller, error or nil for success), in call order.
        let calls = Collector<(String, ImageKitError?)>()
        private let defaults: ResolvedRequest.Defaults
        private var ids: [String: UInt64] = [:]

        init(maxConcurrent: Int = 6, maxPerHost: Int? = nil, order: DownloaderConfiguration.ExecutionOrder = .fifo)
            throws {
            machine = Machine(limits: Machine.Limits(maxConcurrent: maxConcurrent, maxPerHost: maxPerHost,
                                                     order: order))
            defaults = try ResolvedRequest.Defaults(DownloaderConfiguration())
        }

        /// The waiter id of caller `name`.
        func id(_ name: String) -> UInt64 { ids[name]! }

        /// A completion that records `name` and the outcome.
        func completion(_ name: String) -> Machine.Completion {
            let calls = self.calls
            return { result in
                switch result {
                case .success: calls.append((name, nil))
                case .failure(let e): calls.append((name, e))
                }
            }
        }

        /// Caller `name` gets a token (a waiter) without submitting yet.
        mutating func makeWaiter(_ name: String) {
            ids[name] = machine.makeWaiter()
        }

        /// Caller `name` submits (no request modifier), streaming to `stream` if given; returns
        /// the machine's answer.
        mutating func submit(_ name: String, priority: ImagePriority = .normal,
                             progress: Machine.Progress? = nil, stream: Machine.Stream? = nil) -> Machine.SubmitAction {
            if ids[name] == nil { makeWaiter(name) }
            return machine.submit(id(name), priority: priority, progress: progress, stream: stream,
                                  completion: completion(name), hasModifier: false)
        }

        /// Caller `name` submits and attaches a GET of `url`; returns the attach action.
        @discardableResult
        mutating func add(_ name: String, _ url: String, priority: ImagePriority = .normal,
                          headers: HTTPHeaders = [:], progress: Machine.Progress? = nil,
                          stream: Machine.Stream? = nil) throws -> Machine.AttachAction {
            guard case .attach = submit(name, priority: priority, progress: progress, stream: stream) else {
                XCTFail("\(name) was not accepted")
                return .none
            }
            return try attach(name, url, headers: headers)
        }

        /// Attaches caller `name` (already submitted) to a GET of `url`.
        mutating func attach(_ name: String, _ url: String, headers: HTTPHeaders = [:]) throws -> Machine.AttachAction {
            let request = DownloadRequest(url: URL(string: url)!, headers: headers)
            return machine.attach(id(name), request: request, resolved: try ResolvedRequest(request, defaults: defaults))
        }

        /// Runs a launch run as the core does (takes the backlog until it comes back empty)
        /// and returns the started transfers' ids and URL paths, in order.
        mutating func launches() -> [(id: UInt64, path: String)] {
            var all: [(id: UInt64, path: String)] = []
            while case let starts = machine.takeLaunches(), !starts.isEmpty {
                all += starts.map { ($0.transfer, $0.target.request.url.path) }
            }
            return all
        }

        /// Takes the launch backlog and returns only the URL paths.
        mutating func launchedPaths() -> [String] {
            launches().map(\.path)
        }

        /// Ends transfer `id` and calls its completions with `error` (nil: a success is not
        /// needed by these tests, so a marker error stands for "the transfer's result").
        @discardableResult
        mutating func complete(_ id: UInt64, with error: ImageKitError = .network("ended")) -> Machine.Finished? {
            guard case .finish(let finished) = machine.transferCompleted(id) else { return nil }
            for completion in finished.completions { completion(.failure(error)) }
            return finished
        }

        /// Carries out a cancel action the way the core does; returns it.
        @discardableResult
        mutating func cancel(_ name: String) -> Machine.CancelAction {
            let action = machine.cancel(id(name))
            if case .complete(let completion, _, _) = action { completion(.failure(.cancelled)) }
            return action
        }

        /// Callers called so far, in order.
        var called: [String] { calls.all.map(\.0) }
    }

    /// Whether an attach action asks for a launch run.
    private func queuesRun(_ action: Machine.AttachAction) -> Bool {
        if case .queueLaunchRun = action { return true }
        return false
    }

    // MARK: - Submitting and launching

    func testAttachStartsATransferAndAsksForOneLaunchRun() throws {
        var h = try Harness(maxConcurrent: 3)
        XCTAssertTrue(queuesRun(try h.add("a", "http://h.test/a")))
        XCTAssertFalse(queuesRun(try h.add("b", "http://h.test/b")), "a run is already pending")
        XCTAssertFalse(queuesRun(try h.add("c", "http://h.test/c")))
        XCTAssertEqual(h.machine.runningTransfers, 3)
        XCTAssertEqual(h.machine.queuedTransfers, 0)
        let launched = h.machine.takeLaunches()
        XCTAssertEqual(launched.map(\.target.request.url.path), ["/a", "/b", "/c"],
                       "the run takes the backlog in start order")
        XCTAssertEqual(h.machine.takeLaunches().count, 0, "an empty backlog ends the run")
        // The run ended: the next start asks for a new one.
        XCTAssertEqual(h.complete(launched[0].transfer)?.queueLaunchRun, false, "nothing was queued")
        XCTAssertTrue(queuesRun(try h.add("d", "http://h.test/d")))
        XCTAssertEqual(h.launchedPaths(), ["/d"])
    }

    func testTransferStartedRecordsTheEngineIDForCancel() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/a")
        let transfer = h.launches()[0].id
        guard case .none = h.machine.transferStarted(transfer, engineID: 77) else { return XCTFail("no abort expected") }
        guard case .complete(_, nil, 77) = h.cancel("a") else { return XCTFail("the engine transfer must be aborted") }
    }

    // MARK: - Coalescing

    func testStreamingWaitersJoinOnlyBeforeTheBodyStartsAndWhereTheBodyIsKept() throws {
        var h = try Harness()
        let dropping = Machine.Stream(chunks: { _ in }, keepsBody: false)
        let keeping = Machine.Stream(chunks: { _ in }, keepsBody: true)
        try h.add("a", "http://h.test/x", stream: dropping)
        try h.add("b", "http://h.test/x", stream: dropping)
        try h.add("c", "http://h.test/x")
        try h.add("d", "http://h.test/x", stream: keeping)
        let launched = h.launches()
        XCTAssertEqual(launched.count, 3, "b joined a; c wants the body a does not keep; d streams, c does not")
        XCTAssertEqual(h.machine.bodyPiece(of: launched[0].id).count, 2, "a and b get every piece")
        XCTAssertEqual(h.machine.bodyPiece(of: launched[1].id).count, 0, "c's transfer has no streaming waiter")
        try h.add("e", "http://h.test/x", stream: keeping)
        XCTAssertEqual(h.launches().count, 0, "e joined d's transfer: its body has not started")
        XCTAssertEqual(h.machine.bodyPiece(of: launched[2].id).count, 2, "d and e get every piece")
        try h.add("f", "http://h.test/x", stream: keeping)
        try h.add("g", "http://h.test/x")
        XCTAssertEqual(h.launches().count, 1, "f missed d's first piece: a transfer of its own, which g joins")
    }

    func testEqualRequestsShareOneTransfer() throws {
        var h = try Harness()
        XCTAssertTrue(queuesRun(try h.add("a", "http://h.test/x")))
        XCTAssertFalse(queuesRun(try h.add("b", "http://h.test/x")), "b joins a's transfer")
        XCTAssertEqual(h.machine.transferCount, 1)
        XCTAssertEqual(h.machine.waiterCount, 2)
        let launched = h.launches()
        XCTAssertEqual(launched.map(\.path), ["/x"])
        let finished = try XCTUnwrap(h.complete(launched[0].id))
        XCTAssertEqual(finished.sharedBy, 2)
        XCTAssertEqual(Set(h.called), ["a", "b"])
        XCTAssertEqual(h.machine.waiterCount, 0)
        XCTAssertEqual(h.machine.transferCount, 0)
        XCTAssertEqual(h.machine.runningTransfers, 0)
    }

    func testDifferentHeadersMakeDifferentTransfers() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/x", headers: ["X-Variant": "a"])
        try h.add("b", "http://h.test/x", headers: ["X-Variant": "b"])
        try h.add("a2", "http://h.test/x", headers: ["X-Variant": "a"])
        XCTAssertEqual(h.machine.transferCount, 2)
        XCTAssertEqual(h.launchedPaths(), ["/x", "/x"])
    }

    func testANewWaiterDoesNotJoinATransferBeingAborted() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/x")
        let first = h.launches()[0].id
        _ = h.machine.transferStarted(first, engineID: 1)
        h.cancel("a")
        XCTAssertTrue(queuesRun(try h.add("b", "http://h.test/x")), "b starts a transfer of its own")
        XCTAssertEqual(h.machine.transferCount, 2)
        let second = h.launches()[0].id
        XCTAssertNotEqual(first, second)
        // The aborted transfer's end reaches nobody; b's reaches b.
        XCTAssertEqual(h.complete(first, with: .cancelled)?.completions.count, 0)
        XCTAssertEqual(h.complete(second)?.completions.count, 1)
        XCTAssertEqual(h.called, ["a", "b"])
    }

    // MARK: - Cancelling

    func testCancelBeforeSubmitRefusesTheSubmission() throws {
        var h = try Harness()
        h.makeWaiter("a")
        guard case .none = h.cancel("a") else { return XCTFail("nothing to complete before submit") }
        XCTAssertEqual(h.machine.waiterCount, 1, "remembered as cancelled until it submits")
        guard case .complete(let completion, .cancelled) = h.submit("a") else {
            return XCTFail("a cancelled waiter's submission is refused")
        }
        completion(.failure(.cancelled))
        XCTAssertEqual(h.called, ["a"])
        XCTAssertEqual(h.machine.waiterCount, 0)
        XCTAssertEqual(h.machine.transferCount, 0)
    }

    func testCancelOfASubmittedWaiterCompletesItAndNothingElse() throws {
        var h = try Harness()
        guard case .attach = h.submit("a") else { return XCTFail("accepted") }
        guard case .complete(_, nil, nil) = h.cancel("a") else { return XCTFail("completes, no task, no transfer") }
        XCTAssertEqual(h.called, ["a"])
        guard case .none = try h.attach("a", "http://h.test/a") else { return XCTFail("a cancelled waiter stays off") }
        guard case .none = h.machine.fail(h.id("a"), .invalidURL("x")) else { return XCTFail("already completed") }
        XCTAssertEqual(h.machine.transferCount, 0)
        XCTAssertEqual(h.called, ["a"], "completed exactly once")
    }

    func testCancelWhilePreparingCancelsTheModifierTask() throws {
        var h = try Harness()
        h.makeWaiter("a")
        guard case .runModifier = h.machine.submit(h.id("a"), priority: .normal, progress: nil,
                                                   completion: h.completion("a"), hasModifier: true) else {
            return XCTFail("the modifier runs first")
        }
        XCTAssertEqual(h.machine.modifierTasks, 1)
        let task = Task<Void, Never> {}
        guard case .none = h.machine.modifierStarted(h.id("a"), task: task) else { return XCTFail("still preparing") }
        guard case .complete(_, let cancelled?, nil) = h.cancel("a") else { return XCTFail("the task is cancelled") }
        XCTAssertEqual(cancelled, task)
        // The modifier returns after the cancel: its waiter is gone.
        h.machine.modifierFinished()
        XCTAssertEqual(h.machine.modifierTasks, 0)
        guard case .none = try h.attach("a", "http://h.test/a") else { return XCTFail("nothing to attach") }
        XCTAssertEqual(h.called, ["a"])
    }

    func testAModifierTaskKnownOnlyAfterTheCancelIsCancelledToo() throws {
        var h = try Harness()
        h.makeWaiter("a")
        _ = h.machine.submit(h.id("a"), priority: .normal, progress: nil, completion: h.completion("a"),
                             hasModifier: true)
        guard case .complete(_, nil, nil) = h.cancel("a") else { return XCTFail("no task known yet") }
        guard case .cancelTask = h.machine.modifierStarted(h.id("a"), task: Task {}) else {
            return XCTFail("the late task must be cancelled")
        }
    }

    func testCancellingOneOfSeveralCoalescedWaitersLeavesTheTransfer() throws {
        var h = try Harness()
        for name in ["a", "b", "c"] { try h.add(name, "http://h.test/x") }
        let transfer = h.launches()[0].id
        _ = h.machine.transferStarted(transfer, engineID: 5)
        guard case .complete(_, nil, nil) = h.cancel("b") else { return XCTFail("others remain: no abort") }
        XCTAssertEqual(h.calls.all.map(\.0), ["b"])
        XCTAssertEqual(h.calls.all[0].1, .cancelled)
        XCTAssertEqual(h.machine.transferCount, 1)
        let finished = try XCTUnwrap(h.complete(transfer))
        XCTAssertEqual(finished.sharedBy, 2)
        XCTAssertEqual(h.called.sorted(), ["a", "b", "c"], "b only once")
        XCTAssertEqual(h.machine.waiterCount, 0)
    }

    func testCancellingTheLastWaiterBeforeTheEngineAcceptedItAbortsOnStart() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/x")
        let transfer = h.launches()[0].id
        guard case .complete(_, nil, nil) = h.cancel("a") else { return XCTFail("no engine id yet") }
        guard case .abort(engineID: 9) = h.machine.transferStarted(transfer, engineID: 9) else {
            return XCTFail("the engine transfer must be aborted as soon as it is known")
        }
        XCTAssertEqual(h.complete(transfer, with: .cancelled)?.completions.count, 0)
        XCTAssertEqual(h.machine.transferCount, 0)
        XCTAssertEqual(h.machine.runningTransfers, 0)
    }

    func testCancellingTheLastWaiterOfAQueuedTransferDropsIt() throws {
        var h = try Harness(maxConcurrent: 1)
        try h.add("block", "http://h.test/block")
        try h.add("x", "http://h.test/x")
        try h.add("y", "http://h.test/y")
        let block = h.launches()[0].id
        XCTAssertEqual(h.machine.queuedTransfers, 2)
        guard case .complete(_, nil, nil) = h.cancel("x") else { return XCTFail("a queued transfer needs no abort") }
        XCTAssertEqual(h.machine.queuedTransfers, 1)
        XCTAssertEqual(h.machine.transferCount, 2)
        XCTAssertEqual(h.complete(block)?.queueLaunchRun, true)
        XCTAssertEqual(h.launchedPaths(), ["/y"], "x left the queue")
    }

    func testCancelAfterCompletionDoesNothing() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/a")
        h.complete(h.launches()[0].id)
        guard case .none = h.cancel("a") else { return XCTFail("already completed") }
        XCTAssertEqual(h.called, ["a"])
    }

    // MARK: - Queue order and limits

    /// Occupies the only slot, adds `items` in order, then frees slots one by one and
    /// returns the paths in the order they start.
    private func startOrder(_ order: DownloaderConfiguration.ExecutionOrder,
                            _ items: [(name: String, priority: ImagePriority)],
                            then change: (inout Harness) -> Void = { _ in }) throws -> [String] {
        var h = try Harness(maxConcurrent: 1, order: order)
        try h.add("block", "http://h.test/block")
        var running = h.launches()[0].id
        for (name, priority) in items {
            try h.add(name, "http://h.test/\(name.prefix { $0 != "+" })", priority: priority)
        }
        change(&h)
        var started: [String] = []
        while h.complete(running)?.queueLaunchRun == true {
            let next = h.launches()
            XCTAssertEqual(next.count, 1, "one slot")
            started.append(String(next[0].path.dropFirst()))
            running = next[0].id
        }
        XCTAssertEqual(h.machine.queuedTransfers, 0)
        XCTAssertEqual(h.machine.runningTransfers, 0)
        return started
    }

    func testQueuedTransfersStartByPriorityThenFIFO() throws {
        let order = try startOrder(.fifo, [("low", .low), ("n1", .normal), ("high", .high), ("n2", .normal)])
        XCTAssertEqual(order, ["high", "n1", "n2", "low"])
    }

    func testQueuedTransfersStartByPriorityThenLIFO() throws {
        let order = try startOrder(.lifo, [("low", .low), ("n1", .normal), ("n2", .normal), ("high", .high),
                                           ("n3", .normal)])
        XCTAssertEqual(order, ["high", "n3", "n2", "n1", "low"])
    }

    func testACoalescedWaiterRaisesAndLowersItsTransfersPriority() throws {
        let raised = try startOrder(.fifo, [("a", .low), ("b", .normal), ("a+", .high)])
        XCTAssertEqual(raised, ["a", "b"], "a+ joined a and lifted it above b")
        let lowered = try startOrder(.fifo, [("c", .low), ("d", .normal), ("c+", .high)]) { h in
            h.cancel("c+")
        }
        XCTAssertEqual(lowered, ["d", "c"], "without c+, c is low again")
    }

    func testConcurrencyLimit() throws {
        var h = try Harness(maxConcurrent: 2)
        for name in ["a", "b", "c"] { try h.add(name, "http://h.test/\(name)") }
        XCTAssertEqual(h.machine.runningTransfers, 2)
        XCTAssertEqual(h.machine.queuedTransfers, 1)
        let first = h.launches()
        XCTAssertEqual(first.map(\.path), ["/a", "/b"])
        XCTAssertEqual(h.complete(first[1].id)?.queueLaunchRun, true)
        XCTAssertEqual(h.launchedPaths(), ["/c"])
        XCTAssertEqual(h.machine.runningTransfers, 2)
        XCTAssertEqual(h.machine.queuedTransfers, 0)
    }

    func testPerHostLimitLetsOtherHostsPass() throws {
        var h = try Harness(maxConcurrent: 4, maxPerHost: 1)
        try h.add("a1", "http://a.test/1")
        try h.add("a2", "http://a.test/2")
        try h.add("b", "http://b.test/1")
        try h.add("a3", "http://a.test:8080/3")
        let first = h.launches()
        XCTAssertEqual(first.map(\.path), ["/1", "/1", "/3"], "a2 waits; another port is another host")
        XCTAssertEqual(h.machine.queuedTransfers, 1)
        XCTAssertEqual(h.complete(first[1].id)?.queueLaunchRun, false, "b's slot does not free a.test")
        XCTAssertEqual(h.complete(first[0].id)?.queueLaunchRun, true)
        XCTAssertEqual(h.launchedPaths(), ["/2"])
    }

    // MARK: - Engine events

    func testProgressGoesToTheWaitersWithAHandler() throws {
        var h = try Harness()
        let seen = Collector<String>()
        try h.add("a", "http://h.test/x", progress: { _ in seen.append("a") })
        try h.add("b", "http://h.test/x")
        try h.add("c", "http://h.test/x", progress: { _ in seen.append("c") })
        let transfer = h.launches()[0].id
        guard case .report(let target, let handlers) = h.machine.progress(of: transfer) else {
            return XCTFail("a running transfer reports progress")
        }
        XCTAssertEqual(target.request.url.path, "/x")
        for handler in handlers { handler(DownloadProgress(receivedBytes: 1, expectedBytes: nil)) }
        XCTAssertEqual(seen.all, ["a", "c"])
        h.cancel("a")
        guard case .report(_, let left) = h.machine.progress(of: transfer) else { return XCTFail("still running") }
        XCTAssertEqual(left.count, 1)
    }

    func testAHeadRejectionIsReportedWithTheEnd() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/x")
        let transfer = h.launches()[0].id
        XCTAssertEqual(h.machine.target(of: transfer)?.resolved.url, "http://h.test/x")
        h.machine.headRejected(transfer, .unacceptableContentType("text/html"))
        XCTAssertEqual(h.complete(transfer)?.rejection, .unacceptableContentType("text/html"))
    }

    func testUnknownTransfersAreIgnored() throws {
        var h = try Harness()
        guard case .none = h.machine.transferCompleted(42) else { return XCTFail("unknown transfer") }
        guard case .none = h.machine.transferStarted(42, engineID: 1) else { return XCTFail("unknown transfer") }
        guard case .none = h.machine.progress(of: 42) else { return XCTFail("unknown transfer") }
        XCTAssertNil(h.machine.target(of: 42))
        XCTAssertEqual(h.machine.runningTransfers, 0)
    }

    func testFailCompletesOnlyAWaiterNotYetOnATransfer() throws {
        var h = try Harness()
        guard case .attach = h.submit("a") else { return XCTFail("accepted") }
        guard case .complete(let completion, .invalidURL("bad")) = h.machine.fail(h.id("a"), .invalidURL("bad")) else {
            return XCTFail("a submitted waiter fails")
        }
        completion(.failure(.invalidURL("bad")))
        try h.add("b", "http://h.test/b")
        guard case .none = h.machine.fail(h.id("b"), .invalidURL("late")) else {
            return XCTFail("an attached waiter completes with its transfer")
        }
        XCTAssertEqual(h.machine.waiterCount, 1)
        XCTAssertEqual(h.calls.all.map(\.1), [.invalidURL("bad")])
    }

    func testTransferContextsAreCounted() throws {
        var h = try Harness()
        h.machine.contextCreated()
        h.machine.contextCreated()
        h.machine.contextReleased()
        XCTAssertEqual(h.machine.transferContexts, 1)
    }

    // MARK: - Shutdown

    func testRefuseNewRefusesSubmissionsAndLetsTransfersFinish() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/a")
        let transfer = h.launches()[0].id
        h.machine.refuseNew()
        guard case .complete(_, .cancelled) = h.submit("b") else { return XCTFail("refused after refuseNew") }
        XCTAssertEqual(h.complete(transfer)?.completions.count, 1)
        XCTAssertEqual(h.machine.waiterCount, 0)
    }

    func testShutdownCompletesEveryWaiterAndStartsNothing() throws {
        var h = try Harness(maxConcurrent: 2)
        try h.add("running", "http://h.test/running")
        let running = h.launches()[0].id
        _ = h.machine.transferStarted(running, engineID: 1)
        try h.add("backlog", "http://h.test/backlog")
        try h.add("queued", "http://h.test/queued")
        guard case .attach = h.submit("submitted") else { return XCTFail("accepted") }
        h.makeWaiter("preparing")
        _ = h.machine.submit(h.id("preparing"), priority: .normal, progress: nil, completion: h.completion("preparing"),
                             hasModifier: true)
        let task = Task<Void, Never> {}
        _ = h.machine.modifierStarted(h.id("preparing"), task: task)

        h.machine.beginShutdown()
        XCTAssertEqual(h.launchedPaths(), [], "nothing more reaches the engine")
        guard case .complete(_, .cancelled) = h.submit("late") else { return XCTFail("refused once shutting down") }
        // The engine completes what it runs as cancelled; nothing starts in the freed slot.
        XCTAssertEqual(h.complete(running, with: .cancelled)?.queueLaunchRun, false)
        let action = h.machine.finishShutdown()
        XCTAssertEqual(action.modifierTasks, [task])
        for completion in action.completions { completion(.failure(.cancelled)) }
        XCTAssertEqual(h.called.sorted(), ["backlog", "preparing", "queued", "running", "submitted"])
        XCTAssertTrue(h.calls.all.allSatisfy { $0.1 == .cancelled })
        XCTAssertEqual(h.machine.waiterCount, 0)
        XCTAssertEqual(h.machine.transferCount, 0, "the backlog's transfer never reached the engine")
        XCTAssertEqual(h.machine.runningTransfers, 0)
        XCTAssertEqual(h.machine.queuedTransfers, 0)
    }

    func testShutdownKeepsTransfersTheEngineStillHolds() throws {
        var h = try Harness()
        try h.add("a", "http://h.test/a")
        let transfer = h.launches()[0].id
        h.machine.beginShutdown()
        XCTAssertEqual(h.machine.finishShutdown().completions.count, 1)
        XCTAssertEqual(h.machine.transferCount, 1, "the engine will complete it")
        XCTAssertEqual(h.complete(transfer, with: .cancelled)?.completions.count, 0, "its waiter already left")
        XCTAssertEqual(h.machine.transferCount, 0)
        XCTAssertEqual(h.machine.runningTransfers, 0)
    }

    // MARK: - Cancelling all, suspending

    func testCancelAllCompletesEveryWaiterAndEmptiesTheQueue() throws {
        var h = try Harness(maxConcurrent: 1)
        try h.add("running", "http://h.test/a")
        try h.add("shared", "http://h.test/a")
        try h.add("queued", "http://h.test/b")
        h.makeWaiter("early")
        let running = h.launches()[0].id
        _ = h.machine.transferStarted(running, engineID: 9)

        let actions = h.machine.cancelAll()
        var aborted: [UInt64] = []
        for case .complete(let completion, _, let engineID) in actions {
            completion(.failure(.cancelled))
            if let engineID { aborted.append(engineID) }
        }
        XCTAssertEqual(Set(h.called), ["running", "shared", "queued"])
        XCTAssertTrue(h.calls.all.allSatisfy { $0.1 == .cancelled })
        XCTAssertEqual(aborted, [9], "the running transfer is aborted once, by its last waiter")
        XCTAssertEqual(h.machine.queuedTransfers, 0)
        guard case .complete(_, .cancelled) = h.submit("early") else {
            return XCTFail("a waiter not yet submitted is refused when it submits")
        }
        // The aborted transfer ends with nobody left; its slot starts nothing.
        let finished = try XCTUnwrap(h.complete(running, with: .cancelled))
        XCTAssertEqual(finished.completions.count, 0)
        XCTAssertFalse(finished.queueLaunchRun)
        XCTAssertEqual(h.machine.transferCount, 0)
        XCTAssertEqual(h.machine.runningTransfers, 0)
        // Later downloads run as usual.
        XCTAssertTrue(queuesRun(try h.add("later", "http://h.test/c")))
        XCTAssertEqual(h.launchedPaths(), ["/c"])
    }

    func testWhileSuspendedQueuedTransfersDoNotStartAndResumingStartsThem() throws {
        var h = try Harness(maxConcurrent: 2)
        try h.add("a", "http://h.test/a")
        let a = h.launches()[0].id
        guard case .none = h.machine.setSuspended(true) else { return XCTFail("suspending starts nothing") }
        XCTAssertTrue(h.machine.isSuspended)
        XCTAssertFalse(queuesRun(try h.add("b", "http://h.test/b")), "queued, not started")
        XCTAssertFalse(queuesRun(try h.add("c", "http://h.test/c")))
        XCTAssertEqual(h.machine.runningTransfers, 1, "the running transfer goes on")
        XCTAssertEqual(h.machine.queuedTransfers, 2)
        // A slot freed while suspended starts nothing.
        XCTAssertEqual(h.complete(a)?.queueLaunchRun, false)
        XCTAssertEqual(h.called, ["a"])
        XCTAssertEqual(h.machine.takeLaunches().count, 0)

        guard case .queueLaunchRun = h.machine.setSuspended(false) else {
            return XCTFail("resuming asks for a launch run")
        }
        XCTAssertFalse(h.machine.isSuspended)
        XCTAssertEqual(h.launchedPaths(), ["/b", "/c"])
        XCTAssertEqual(h.machine.queuedTransfers, 0)
        guard case .none = h.machine.setSuspended(false) else { return XCTFail("nothing left to start") }
    }
}
