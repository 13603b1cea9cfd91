import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// Cancellation at every stage, by token and by Task, deadlines, and a thousand random loads:
/// a completion is never called after cancel, every other load completes exactly once, and
/// nothing is left running.
final class ImageManagerCancellationTests: ManagerTestCase {
    /// Hands an observer hook the task to cancel once the test has it (the hook may run first).
    final class TaskBox: @unchecked Sendable {
        // @unchecked Sendable: `task` is written once, before `ready` is signalled, and read only
        // after waiting for that signal. Weak: the manager's observer holds this box, and the
        // task holds the manager.
        private weak var task: ImageTask?
        private let ready = DispatchSemaphore(value: 0)

        func set(_ task: ImageTask) {
            self.task = task
            ready.signal()
        }

        /// Cancels the task, waiting for it to be set (later calls find it at once).
        func cancel() {
            ready.wait()
            ready.signal()
            task?.cancel()
        }
    }

    func testCancelRightAfterStartNeverCompletes() async throws {
        let f = try fixture
        let m = try makeManager()
        var loads: [(ImageTask, Collector<Result<ImageResult, ImageKitError>>)] = []
        for i in 0..<20 {
            let load = ManagerTesting.start(m, f.nginx.url("/tiles/\(i).png"))
            load.task.cancel()
            load.task.cancel()
            loads.append(load)
        }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        for (task, completions) in loads {
            XCTAssertTrue(task.isCancelled)
            XCTAssertFalse(task.isFinished)
            XCTAssertEqual(completions.all.count, 0)
        }
    }

    func testAlreadyCancelledTaskSendsNothing() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let k = unique("precancelled")
        let url = f.script.url("/gate_png?key=\(k)")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await m.image(for: url)
        }
        let result = await task.result
        XCTAssertEqual(result.failure as? ImageKitError, .cancelled)
        await ManagerTesting.assertIdle(m)
        XCTAssertEqual(try f.script.stats(k).count, 0)
        XCTAssertTrue(recorder.names.isEmpty, "\(recorder.names)")
    }

    func testCancelDuringTheCacheQuery() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let box = TaskBox()
        recorder.onEvent { event in
            if case .cacheQuery(_, _, .disk, _, _) = event { box.cancel() }
        }
        let (url, path) = try f.copy(ManagerFixture.tile(11), named: "11.png")
        let (task, completions) = ManagerTesting.start(m, url)
        box.set(task)
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertTrue(task.isCancelled)
        XCTAssertEqual(completions.all.count, 0)
        XCTAssertFalse(recorder.names.contains("download"), "\(recorder.names)")
        XCTAssertTrue(f.requests(path).isEmpty)
    }

    func testCancelMidDownloadAbortsTheTransfer() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("middownload")
        let progress = Collector<Int64>()
        let (task, completions) = ManagerTesting.start(m, f.script.url("/hold?key=\(k)")) { progress.append($0.receivedBytes) }
        await DownloadTesting.waitUntil("the body has started") { !progress.all.isEmpty }
        task.cancel()
        try await DownloadTesting.waitUntil("the server sees the client go") { try f.script.stats(k).aborted }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(completions.all.count, 0)
        XCTAssertTrue(task.isCancelled)
    }

    func testCancelMidDecodeStopsTheDecoder() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let box = TaskBox()
        recorder.onEvent { event in
            if case .decodeStarted = event { box.cancel() }
        }
        let (task, completions) = ManagerTesting.start(m, f.nginx.url("/large.jpg"))
        box.set(task)
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(completions.all.count, 0)
        let names = recorder.names
        XCTAssertTrue(names.contains("decode failed 10"), "the decoder stopped on the cancel flag: \(names)")
        XCTAssertFalse(names.contains { $0.hasPrefix("decoded") || $0.hasPrefix("stored") }, "\(names)")
        XCTAssertEqual(names.last, "decode failed 10")
        XCTAssertTrue(names.contains("cancelled"))
        let cached = await m.builtInCache.contains(m.cacheKey(for: f.nginx.url("/large.jpg"))!)
        XCTAssertFalse(cached)
    }

    /// Cancels its own load, waits until the load's cancellation reaches it, then blurs widely
    /// (seconds of work on the large photo): the blur must stop on the flag at once.
    struct CancellingBlur: CancellableImageTransformer {
        let box: TaskBox
        var key: String { "cancelling-blur" }

        func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
            box.cancel()
            let deadline = Date().addingTimeInterval(10)
            while !cancellation.isCancelled, Date() < deadline { usleep(1_000) }
            let start = Date()
            defer { XCTAssertLessThan(Date().timeIntervalSince(start), 1, "the blur stopped on the flag") }
            return try BlurTransformer(sigma: 80).transform(image, cancellation: cancellation)
        }
    }

    func testCancelMidTransformStopsTheOperation() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let box = TaskBox()
        let url = f.nginx.url("/large.jpg")
        let context = ImageContext(imageTransformer: CancellingBlur(box: box))
        let (task, completions) = ManagerTesting.start(m, url, context: context)
        box.set(task)
        await ManagerTesting.assertIdle(m)
        // The manager is idle once the load is cancelled; the worker reports the transform's end.
        await DownloadTesting.waitUntil("the transform ended") {
            recorder.names.contains { $0.hasPrefix("transformed") }
        }
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(completions.all.count, 0)
        let names = recorder.names
        XCTAssertTrue(names.contains("transformed cancelling-blur failed"), "\(names)")
        XCTAssertFalse(names.contains { $0.hasPrefix("stored") }, "\(names)")
        XCTAssertTrue(names.contains("cancelled"))
        let failures = recorder.events.all.compactMap { event -> ImageKitError? in
            if case .transformed(_, _, _, _, let error) = event { return error }
            return nil
        }
        XCTAssertEqual(failures, [.cancelled], "a cancellation, not a failed transform")
        let cached = await m.builtInCache.contains(m.cacheKey(for: url, context: context)!)
        XCTAssertFalse(cached)
    }

    func testCancellingOneOfSeveralCoalescedLoads() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("coalesced")
        let url = f.script.url("/gate_png?key=\(k)&w=9&h=9")
        let loads = (0..<3).map { _ in ManagerTesting.start(m, url) }
        let awaited = Task { try await m.image(for: url) }
        try await DownloadTesting.waitUntil("the request reaches the server") { try f.script.stats(k).count == 1 }
        await DownloadTesting.waitUntil("every load waits") { m.statistics.runningTasks == 4 }
        loads[1].task.cancel()
        awaited.cancel()
        let cancelledResult = await awaited.result
        XCTAssertEqual(cancelledResult.failure as? ImageKitError, .cancelled)
        try f.script.open(k)
        await DownloadTesting.waitUntil("the others complete") {
            loads[0].completions.all.count == 1 && loads[2].completions.all.count == 1
        }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(loads[1].completions.all.count, 0)
        XCTAssertEqual(try loads[0].completions.all[0].get().image.width, 9)
        XCTAssertEqual(try f.script.stats(k).count, 1)
    }

    func testTaskCancellationCancelsTheLoad() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("taskcancel")
        let load = Task { try await m.image(for: f.script.url("/hold?key=\(k)")) }
        try await DownloadTesting.waitUntil("the request reaches the server") { try f.script.stats(k).count == 1 }
        load.cancel()
        let result = await load.result
        XCTAssertEqual(result.failure as? ImageKitError, .cancelled)
        try await DownloadTesting.waitUntil("the server sees the client go") { try f.script.stats(k).aborted }
        await ManagerTesting.assertIdle(m)
    }

    func testCancelAll() async throws {
        let f = try fixture
        let m = try makeManager()
        let keys = (0..<3).map { unique("all\($0)") }
        let loads = keys.map { ManagerTesting.start(m, f.script.url("/hold?key=\($0)")) }
        let awaited = Task { try await m.image(for: f.script.url("/hold?key=\(keys[0])")) }
        try await DownloadTesting.waitUntil("the requests reach the server") {
            try keys.allSatisfy { try f.script.stats($0).count == 1 }
        }
        await DownloadTesting.waitUntil("every load runs") { m.statistics.runningTasks == 4 }
        XCTAssertTrue(m.isRunning)
        m.cancelAll()
        let result = await awaited.result
        XCTAssertEqual(result.failure as? ImageKitError, .cancelled)
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertTrue(loads.allSatisfy { $0.task.isCancelled && $0.completions.all.isEmpty })
    }

    func testCancelAfterCompletionDoesNothing() async throws {
        let f = try fixture
        let m = try makeManager()
        let (task, completions) = ManagerTesting.start(m, f.nginx.url("/tiles/12.png"))
        await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
        task.cancel()
        XCTAssertFalse(task.isCancelled)
        XCTAssertTrue(task.isFinished)
        await ManagerTesting.assertIdle(m)
    }

    // MARK: - Deadlines

    func testDeadlineFailsTheLoadAndStopsItsDownload() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("deadline")
        let context = ImageContext(deadline: .now + .milliseconds(300))
        let e = await ManagerTesting.error(m, f.script.url("/hold?key=\(k)"), context: context)
        guard e?.code == .deadlineExceeded else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(e?.code, .deadlineExceeded)
        try await DownloadTesting.waitUntil("the server sees the client go") { try f.script.stats(k).aborted }
        XCTAssertFalse(m.isBlocklisted(f.script.url("/hold?key=\(k)")))
        // Completion style: one completion with the error.
        let k2 = unique("deadline")
        let (task, completions) = ManagerTesting.start(m, f.script.url("/hold?key=\(k2)"),
                                                       context: ImageContext(deadline: .now + .milliseconds(200)))
        await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
        guard case .failure(let e)? = completions.all.first, e.code == .deadlineExceeded else { return XCTFail("\(completions.all)") }
        XCTAssertTrue(task.isFinished)
        // A deadline already passed fails at once, without a request.
        let k3 = unique("deadline")
        let late = await ManagerTesting.error(m, f.script.url("/hold?key=\(k3)"), context: ImageContext(deadline: .now))
        guard late?.code == .deadlineExceeded else { return XCTFail() }
        XCTAssertEqual(try f.script.stats(k3).count, 0)
        await ManagerTesting.assertIdle(m)
    }

    func testDeadlineOfOneCoalescedLoadLeavesTheOther() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("deadline-shared")
        let url = f.script.url("/gate_png?key=\(k)&w=6&h=5")
        let patient = Task { try await m.image(for: url) }
        let hurried = await ManagerTesting.error(m, url, context: ImageContext(deadline: .now + .milliseconds(200)))
        guard hurried?.code == .deadlineExceeded else { return XCTFail("\(String(describing: hurried))") }
        try f.script.open(k)
        let width = try await patient.value.image.width
        XCTAssertEqual(width, 6)
        XCTAssertEqual(try f.script.stats(k).count, 1)
        await ManagerTesting.assertIdle(m)
    }

    // MARK: - Many loads

    /// 1,000 loads over 50 URLs with random options and random cancellations, in both call
    /// styles: each load completes exactly once, or (cancelled first) never; nothing leaks.
    func testThousandRandomLoadsCompleteExactlyOnce() async throws {
        let f = try fixture
        let m = try makeManager(downloader: { $0.maxConcurrentDownloads = 6 })
        var rng = Scrambler(seed: 0x6A)
        let choices: [ImageOptions] = [[], [], .refreshCached, .fromCacheOnly, .fromLoaderOnly, .waitStoreCache,
                                       .cacheMemoryOnly, .queryMemoryData]
        struct Load {
            var tile: Int
            var size: Int?
            var options: ImageOptions
            var task: ImageTask
            var completions: Collector<Result<ImageResult, ImageKitError>>
        }
        var loads: [Load] = []
        var awaited: [(tile: Int, size: Int?, task: Task<ImageResult, any Error>)] = []
        for i in 0..<1_000 {
            let tile = Int(rng.next() % 50)
            let url = f.nginx.url("/tiles/\(tile).png")
            let options = choices[Int(rng.next() % UInt64(choices.count))]
            let size: Int? = [nil, nil, 8, 16][Int(rng.next() % 4)]
            let context = ImageContext(thumbnailPixelSize: size.map { PixelSize(square: $0) },
                                       priority: ImagePriority.allCases[Int(rng.next() % 3)])
            if i % 4 == 3 {
                let task = Task { try await m.image(for: url, options: options, context: context) }
                awaited.append((tile, size, task))
                if rng.next() % 3 == 0 { task.cancel() }
            } else {
                let (task, completions) = ManagerTesting.start(m, url, options: options, context: context)
                loads.append(Load(tile: tile, size: size, options: options, task: task, completions: completions))
                switch rng.next() % 6 {
                case 0: task.cancel()
                case 1: loads[Int(rng.next() % UInt64(loads.count))].task.cancel()
                default: break
                }
            }
            if i % 50 == 49 { try await Task.sleep(for: .milliseconds(1)) }
        }
        for _ in 0..<100 { loads[Int(rng.next() % UInt64(loads.count))].task.cancel() }

        func check(_ image: Image, tile: Int, size: Int?, _ what: String) {
            if let size {
                XCTAssertLessThanOrEqual(max(image.width, image.height), size, what)
            } else {
                XCTAssertEqual([image.width, image.height], [24 + tile % 5, 16 + tile % 3], what)
            }
        }
        var succeeded = 0, cancelled = 0
        for (n, a) in awaited.enumerated() {
            switch await a.task.result {
            case .success(let r):
                succeeded += 1
                check(r.image, tile: a.tile, size: a.size, "awaited load \(n)")
            case .failure(let e as ImageKitError):
                if e == .cancelled { cancelled += 1 } else if e.code == .notInCache {} else {
                    XCTFail("awaited load \(n): \(e)")
                }
            case .failure(let e):
                XCTFail("awaited load \(n): \(e)")
            }
        }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        for (n, load) in loads.enumerated() {
            let all = load.completions.all
            if load.task.isCancelled {
                cancelled += 1
                // Cancelled first: no completion — except a refreshed load's first one, if it came before.
                XCTAssertTrue(all.isEmpty || (all.count == 1 && load.options.contains(.refreshCached)),
                              "load \(n): \(all.count) completions after cancel")
                continue
            }
            XCTAssertTrue(load.task.isFinished, "load \(n)")
            XCTAssertTrue((1...2).contains(all.count), "load \(n): \(all.count) completions")
            for result in all {
                switch result {
                case .success(let r):
                    succeeded += 1
                    check(r.image, tile: load.tile, size: load.size, "load \(n)")
                case .failure(let e) where e.code == .notInCache:
                    break
                case .failure(let e):
                    XCTFail("load \(n): \(e)")
                }
            }
            if all.count == 2 {
                XCTAssertTrue(load.options.contains(.refreshCached), "load \(n) completed twice")
            }
        }
        XCTAssertGreaterThan(succeeded, 500)
        XCTAssertGreaterThan(cancelled, 50)
        let s = m.statistics
        XCTAssertEqual([s.runningTasks, s.jobs, s.backgroundTasks, s.blocklistedURLs], [0, 0, 0, 0])
    }
}
