import Foundation
import ImageKit
import TestServers
import XCTest

/// Coalescing, cancellation, priorities, limits, the request modifier, observers
/// and bookkeeping, against real servers on 127.0.0.1.
final class DownloaderSchedulingTests: LoopbackTestCase {
    /// A key no other test (or earlier run of this one) has used on the Python server.
    private func key(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8))" }

    // MARK: - Coalescing

    func testHundredConcurrentCallersMakeOneServerRequest() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("hundred")
        let url = f.script.url("/gate?key=\(k)&n=50000")
        async let results = withThrowingTaskGroup(of: DownloadResult.self) { group in
            for _ in 0..<100 { group.addTask { try await d.download(DownloadRequest(url: url)) } }
            return try await group.reduce(into: [DownloadResult]()) { $0.append($1) }
        }
        await DownloadTesting.waitUntil("100 callers wait on one transfer") {
            let s = d.statistics
            return s.waiters == 100 && s.transfers == 1
        }
        try f.script.open(k)
        let all = try await results
        XCTAssertEqual(all.count, 100)
        for r in all {
            XCTAssertEqual(Array(r.data), LoopbackFixture.scriptPattern(50_000))
            XCTAssertEqual(r.metrics.sharedBy, 100)
        }
        XCTAssertEqual(try f.script.stats(k).count, 1)
        await DownloadTesting.assertIdle(d)
    }

    func testEachCallerGetsItsOwnProgressAndCompletion() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("progress")
        let url = f.script.url("/gate?key=\(k)&n=40000")
        let progress = [Collector<Int64>(), Collector<Int64>()]
        let done = Collector<(Int, Int)>()
        for i in 0..<2 {
            d.startDownload(DownloadRequest(url: url), progress: { progress[i].append($0.receivedBytes) }) {
                done.append((i, (try? $0.get())?.data.count ?? -1))
            }
        }
        await DownloadTesting.waitUntil("both callers share the transfer") { d.statistics.waiters == 2 }
        XCTAssertEqual(d.statistics.transfers, 1)
        try f.script.open(k)
        await DownloadTesting.waitUntil("both complete with their last progress") {
            done.all.count == 2 && progress.allSatisfy { $0.all.last == 40_000 }
        }
        XCTAssertEqual(done.all.sorted { $0.0 < $1.0 }.map(\.1), [40_000, 40_000])
    }

    func testDifferentHeadersDoNotShareATransfer() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("headers")
        let url = f.script.url("/gate?key=\(k)&n=100")
        var a = DownloadRequest(url: url)
        a.headers["X-Variant"] = "a"
        var b = DownloadRequest(url: url)
        b.headers["X-Variant"] = "b"
        let done = Collector<Bool>()
        for request in [a, b, a] { d.startDownload(request) { done.append((try? $0.get()) != nil) } }
        await DownloadTesting.waitUntil("two transfers for three callers") {
            let s = d.statistics
            return s.waiters == 3 && s.transfers == 2
        }
        try f.script.open(k)
        await DownloadTesting.waitUntil("all complete") { done.all.count == 3 }
        XCTAssertEqual(done.all, [true, true, true])
        XCTAssertEqual(try f.script.stats(k).count, 2)
    }

    func testCancellingOneOfSeveralCallersLeavesTheOthers() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("one-of-n")
        let url = f.script.url("/gate?key=\(k)&n=30000")
        let results = Collector<(Int, Result<DownloadResult, ImageKitError>)>()
        let tokens = (0..<5).map { i in d.startDownload(DownloadRequest(url: url)) { results.append((i, $0)) } }
        try await DownloadTesting.waitUntil("five callers on one transfer that reached the server") {
            let s = d.statistics
            return try s.waiters == 5 && s.transfers == 1 && s.engineActive == 1 && f.script.stats(k).count == 1
        }
        tokens[2].cancel()
        await DownloadTesting.waitUntil("the cancelled caller completes") { results.all.count == 1 }
        XCTAssertEqual(results.all.first?.0, 2)
        XCTAssertEqual(results.all.first?.1.failure, .cancelled)
        XCTAssertEqual(d.statistics.waiters, 4)
        XCTAssertEqual(d.statistics.transfers, 1)

        try f.script.open(k)
        await DownloadTesting.waitUntil("the others complete") { results.all.count == 5 }
        for (i, result) in results.all.dropFirst() {
            let r = try XCTUnwrap(try? result.get(), "caller \(i)")
            XCTAssertEqual(r.data.count, 30_000)
            XCTAssertEqual(r.metrics.sharedBy, 4)
        }
        XCTAssertEqual(try f.script.stats(k).count, 1)
        tokens[0].cancel() // after completion: nothing happens
        await DownloadTesting.assertIdle(d)
        XCTAssertEqual(results.all.count, 5)
    }

    func testCancellingEveryCallerAbortsTheTransfer() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("abort-all")
        let url = f.script.url("/hold?key=\(k)")
        let results = Collector<Result<DownloadResult, ImageKitError>>()
        let progressed = Collector<Int64>()
        let tokens = (0..<3).map { _ in
            d.startDownload(DownloadRequest(url: url), progress: { progressed.append($0.receivedBytes) }) {
                results.append($0)
            }
        }
        await DownloadTesting.waitUntil("the body has started") { !progressed.all.isEmpty }
        XCTAssertFalse(try f.script.stats(k).aborted)
        tokens.forEach { $0.cancel() }
        await DownloadTesting.waitUntil("every caller completes") { results.all.count == 3 }
        XCTAssertEqual(results.all.map(\.failure), [.cancelled, .cancelled, .cancelled])
        try await DownloadTesting.waitUntil("the server sees the client go away") { try f.script.stats(k).aborted }
        await DownloadTesting.assertIdle(d)
    }

    func testTaskCancellationCancelsTheDownload() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("task")
        let task = Task { try await d.download(DownloadRequest(url: f.script.url("/hold?key=\(k)"))) }
        try await DownloadTesting.waitUntil("the request reached the server") {
            try d.statistics.engineActive == 1 && f.script.stats(k).count == 1
        }
        task.cancel()
        switch await task.result {
        case .success: XCTFail("a cancelled task must not succeed")
        case .failure(let e): XCTAssertEqual(e as? ImageKitError, .cancelled)
        }
        try await DownloadTesting.waitUntil("the server sees the client go away") { try f.script.stats(k).aborted }
        await DownloadTesting.assertIdle(d)
    }

    func testAlreadyCancelledTaskSendsNothing() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("precancelled")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await d.download(DownloadRequest(url: f.script.url("/bytes?key=\(k)")))
        }
        let result = await task.result
        XCTAssertEqual((result.failure as? ImageKitError), .cancelled)
        await DownloadTesting.assertIdle(d)
        XCTAssertEqual(try f.script.stats(k).count, 0)
    }

    // MARK: - Priorities and order

    /// Blocks the only slot with a gated request, queues `items` in order, opens the
    /// gate and returns the order in which the downloads completed.
    private func completionOrder(_ order: DownloaderConfiguration.ExecutionOrder,
                                 _ items: [(name: String, priority: ImagePriority)],
                                 beforeOpening: ([String: DownloadToken]) -> Void = { _ in }) async throws -> [String] {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.maxConcurrentDownloads = 1
            $0.executionOrder = order
        }
        let block = key("block")
        let run = key("run")
        let done = Collector<(name: String, ok: Bool)>()
        d.startDownload(DownloadRequest(url: f.script.url("/gate?key=\(block)&n=10"))) {
            done.append(("block", (try? $0.get()) != nil))
        }
        try await DownloadTesting.waitUntil("the slot is taken") { try f.script.stats(block).count == 1 }
        var tokens: [String: DownloadToken] = [:]
        for (name, priority) in items {
            let url = f.script.url("/bytes?n=10&key=\(run)-\(name.prefix { $0 != "+" })")
            tokens[name] = d.startDownload(DownloadRequest(url: url), priority: priority) { r in
                done.append((name, (try? r.get()) != nil))
            }
        }
        beforeOpening(tokens)
        try f.script.open(block)
        // Completion handlers run on the callback queue, after the downloader lets go.
        await DownloadTesting.waitUntil("every caller completes") { done.all.count == items.count + 1 }
        await DownloadTesting.assertIdle(d)
        return done.all.filter(\.ok).map(\.name)
    }

    func testPriorityOrderWithOneSlot() async throws {
        let order = try await completionOrder(.fifo, [("low", .low), ("n1", .normal), ("high", .high), ("n2", .normal)])
        XCTAssertEqual(order, ["block", "high", "n1", "n2", "low"])
    }

    func testLIFOOrderWithOneSlot() async throws {
        let order = try await completionOrder(.lifo, [("low", .low), ("n1", .normal), ("n2", .normal), ("high", .high),
                                                      ("n3", .normal)])
        XCTAssertEqual(order, ["block", "high", "n3", "n2", "n1", "low"])
    }

    func testCoalescedRequestTakesItsWaitersHighestPriority() async throws {
        // "a+" joins a's transfer with high priority: a moves ahead of b.
        let raised = try await completionOrder(.fifo, [("a", .low), ("b", .normal), ("a+", .high)])
        XCTAssertEqual(raised.first, "block")
        XCTAssertEqual(Array(raised.dropFirst().prefix(2)), ["a", "a+"])
        XCTAssertEqual(raised.last, "b")

        // When the high-priority waiter leaves, c falls back to low, behind d.
        let lowered = try await completionOrder(.fifo, [("c", .low), ("d", .normal), ("c+", .high)]) { tokens in
            tokens["c+"]!.cancel()
        }
        XCTAssertEqual(lowered, ["block", "d", "c"])
    }

    func testPerHostLimit() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.maxConcurrentDownloads = 4
            $0.maxConcurrentDownloadsPerHost = 1
        }
        let a = key("host-a"), b = key("host-b")
        let done = Collector<String>()
        d.startDownload(DownloadRequest(url: f.script.url("/gate?key=\(a)&n=10"))) { _ in done.append("a") }
        d.startDownload(DownloadRequest(url: f.script.url("/gate?key=\(b)&n=10"))) { _ in done.append("b") }
        d.startDownload(DownloadRequest(url: f.nginx.url("/small.png"))) { _ in done.append("other host") }
        await DownloadTesting.waitUntil("the other host's download completes") { done.all == ["other host"] }
        XCTAssertEqual(d.statistics.queuedTransfers, 1)
        XCTAssertEqual(try f.script.stats(b).count, 0, "b waits for a's slot on the same host")
        try f.script.open(b)
        try f.script.open(a)
        await DownloadTesting.waitUntil("both complete") { done.all.count == 3 }
        XCTAssertEqual(done.all, ["other host", "a", "b"])
        await DownloadTesting.assertIdle(d)
    }

    // MARK: - Request modifier and observers

    func testRequestModifier() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.requestModifier = { request in
                if request.url.path == "/refused" { return nil }
                var r = request
                r.headers["X-Signed"] = "yes"
                return r
            }
        }
        let r = try await d.download(DownloadRequest(url: f.script.url("/echo")))
        let sent = try JSONDecoder().decode([String: [String]].self, from: r.data)
        XCTAssertEqual(sent["x-signed"], ["yes"])

        let k = key("refused")
        let refused = await DownloadTesting.result(d, DownloadRequest(url: f.script.url("/refused?key=\(k)")))
        XCTAssertEqual(refused.failure, .cancelled)
        XCTAssertEqual(try f.script.stats(k).count, 0)
        await DownloadTesting.assertIdle(d)
    }

    func testObserverSeesEveryEvent() async throws {
        final class Recorder: DownloaderObserver {
            let events = Collector<String>()
            func receive(_ event: DownloadEvent) {
                switch event {
                case .started: events.append("started")
                case .response(_, let r): events.append("response \(r.statusCode)")
                case .progress: events.append("progress")
                case .finished(_, _, let m): events.append("finished \(m.bodyBytes)")
                case .failed(_, let e, _): events.append("failed \(e.code.rawValue)")
                }
            }
        }
        let f = try fixture
        let recorder = Recorder()
        let d = try DownloadTesting.downloader { $0.observers = [recorder] }
        _ = try await d.download(DownloadRequest(url: f.nginx.url("/medium.bin")))
        _ = await DownloadTesting.result(d, DownloadRequest(url: f.nginx.url("/missing.png")))
        await DownloadTesting.waitUntil("both transfers are reported") { recorder.events.all.count { $0.hasPrefix("f") } == 2 }
        let events = recorder.events.all.filter { $0 != "progress" }
        XCTAssertEqual(events, ["started", "response 200", "finished 300000", "started", "response 404", "failed 20"])
        XCTAssertTrue(recorder.events.all.contains("progress"))
    }

    // MARK: - Bookkeeping under load

    func testThousandRequestsWithRandomCancellations() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.maxConcurrentDownloads = 6 }
        var rng = Scrambler(seed: 0x1000)
        let outcomes = Collector<(Int, Result<DownloadResult, ImageKitError>)>()
        var tokens: [DownloadToken] = []
        var names: [String] = []
        for i in 0..<1_000 {
            let name = "files/\(rng.next() % 40).bin"
            names.append(name)
            let priority = ImagePriority(rawValue: Int(rng.next() % 3))!
            tokens.append(d.startDownload(DownloadRequest(url: f.nginx.url("/" + name)), priority: priority) {
                outcomes.append((i, $0))
            })
            if rng.next() % 3 == 0 { tokens[Int(rng.next() % UInt64(tokens.count))].cancel() }
            if i % 100 == 99 { try await Task.sleep(for: .milliseconds(2)) }
        }
        for _ in 0..<300 { tokens[Int(rng.next() % 1_000)].cancel() }
        await DownloadTesting.waitUntil("every caller completes") { outcomes.all.count >= 1_000 }
        await DownloadTesting.assertIdle(d)

        let all = outcomes.all
        XCTAssertEqual(all.count, 1_000, "each caller completes exactly once")
        XCTAssertEqual(Set(all.map(\.0)).count, 1_000)
        var succeeded = 0, cancelled = 0
        for (i, result) in all {
            switch result {
            case .success(let r):
                succeeded += 1
                XCTAssertEqual(Array(r.data), LoopbackFixture.files[names[i]], "caller \(i)")
            case .failure(let e):
                XCTAssertEqual(e, .cancelled, "caller \(i)")
                cancelled += 1
            }
        }
        XCTAssertGreaterThan(succeeded, 0)
        XCTAssertGreaterThan(cancelled, 0)
    }

    /// A cancel racing the submission itself (between the caller's request being accepted and
    /// its joining a transfer) still completes the caller, once. Found by the manager's soak.
    func testCancelRacingTheSubmissionStillCompletes() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.maxConcurrentDownloads = 2 }
        let outcomes = Collector<Int>()
        let n = 10_000
        let url = f.nginx.url("/files/1.bin")
        var rng = Scrambler(seed: 0x5EED)
        for i in 0..<n {
            let task = Task.detached {
                _ = try? await d.download(DownloadRequest(url: url))
                outcomes.append(i)
            }
            // Cancel a few microseconds later, while the task may be inside `download`.
            let until = DispatchTime.now().uptimeNanoseconds + rng.next() % 40_000
            while DispatchTime.now().uptimeNanoseconds < until {}
            task.cancel()
        }
        await DownloadTesting.waitUntil("every caller completes") { outcomes.all.count >= n }
        await DownloadTesting.assertIdle(d)
        XCTAssertEqual(outcomes.all.count, n, "each caller completes exactly once")
    }

    func testManyAsyncDownloadsWithRandomTaskCancellation() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.maxConcurrentDownloads = 4
            $0.requestModifier = { request in
                await Task.yield()
                return request
            }
        }
        var rng = Scrambler(seed: 0x2000)
        var tasks: [Task<Bool, Never>] = []
        for _ in 0..<300 {
            let url = f.nginx.url("/files/\(rng.next() % 40).bin")
            tasks.append(Task { (try? await d.download(DownloadRequest(url: url))) != nil })
            if rng.next() % 2 == 0 { tasks[Int(rng.next() % UInt64(tasks.count))].cancel() }
        }
        var succeeded = 0
        for task in tasks where await task.value { succeeded += 1 }
        XCTAssertGreaterThan(succeeded, 0)
        XCTAssertLessThan(succeeded, 300)
        await DownloadTesting.assertIdle(d)
    }

    func testReleasingTheDownloaderCancelsEverything() async throws {
        let f = try fixture
        var d: Downloader? = try DownloadTesting.downloader { $0.maxConcurrentDownloads = 1 }
        let k = key("release")
        let results = Collector<Result<DownloadResult, ImageKitError>>()
        d!.startDownload(DownloadRequest(url: f.script.url("/hold?key=\(k)"))) { results.append($0) }
        let queued = d!.startDownload(DownloadRequest(url: f.nginx.url("/small.png"))) { results.append($0) }
        try await DownloadTesting.waitUntil("the held request reached the server") { try f.script.stats(k).count == 1 }
        d = nil
        await DownloadTesting.waitUntil("both callers complete") { results.all.count == 2 }
        XCTAssertEqual(results.all.map(\.failure), [.cancelled, .cancelled])
        try await DownloadTesting.waitUntil("the server sees the client go away") { try f.script.stats(k).aborted }
        queued.cancel() // after shutdown: nothing happens
    }
}
