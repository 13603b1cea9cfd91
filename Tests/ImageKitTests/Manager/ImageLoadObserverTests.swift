import Foundation
import ImageKit
import XCTest

/// Per-load observers (``ImageLoadObserverFactory``): made in the caller's task, told of their
/// own load's events and of the pipeline's while they wait on it, and ended exactly once.
final class ImageLoadObserverTests: ManagerTestCase {
    /// A task-local value standing for a caller's tracing context or request logger.
    @TaskLocal static var requestID: String?

    func testFactoryRunsInTheCallersTaskAndSeesTheLoadsEvents() async throws {
        let f = try fixture
        let loads = LoadRecorder()
        let manager = EventRecorder()
        let m = try makeManager {
            $0.loadObserverFactories = [loads]
            $0.observers = [manager]
        }
        let url = f.nginx.url("/tiles/3.png")
        try await Self.$requestID.withValue("request-1") {
            _ = try await ManagerTesting.image(m, url)
        }
        await ManagerTesting.assertIdle(m)
        XCTAssertEqual(loads.all.count, 1)
        let load = try XCTUnwrap(loads.all.first)
        XCTAssertEqual(load.requestID, "request-1", "made inside the caller's task")
        XCTAssertEqual(load.url, url)
        XCTAssertEqual(load.names, ["query memory miss", "query disk miss", "query data miss", "download",
                                    "response 200", "decode", "decoded 27x16", "stored memory",
                                    "completed loader"])
        XCTAssertEqual(load.completedTasks, [load.task])
        XCTAssertEqual(load.endings, 1)
        XCTAssertEqual(load.eventsAfterEnd, 0)
        // The manager's observers got the same events, and the disk write the load did not wait for.
        XCTAssertEqual(manager.names, load.names + ["stored disk"])

        // A memory hit: its lookup and its completion, then the end.
        let hit = try await Self.$requestID.withValue("request-2") { try await ManagerTesting.image(m, url) }
        XCTAssertEqual(hit.source, .memory)
        XCTAssertEqual(loads.all.count, 2)
        let second = loads.all[1]
        XCTAssertEqual(second.requestID, "request-2")
        XCTAssertEqual(second.names, ["query memory hit", "completed memory"])
        XCTAssertEqual(second.completedTasks, [second.task])
        XCTAssertNotEqual(second.task, load.task)
        XCTAssertEqual(second.endings, 1)
    }

    func testCompletionHandlerLoadsAndWaitingForTheDiskWrite() async throws {
        let f = try fixture
        let loads = LoadRecorder()
        let m = try makeManager { $0.loadObserverFactories = [loads] }
        let url = f.nginx.url("/tiles/4.png")
        let (task, completions) = Self.$requestID.withValue("handler") {
            ManagerTesting.start(m, url, options: .waitStoreCache)
        }
        await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
        await ManagerTesting.assertIdle(m)
        let load = try XCTUnwrap(loads.all.first)
        XCTAssertEqual(load.task, task.id, "the factory's id is the task's")
        XCTAssertEqual(load.requestID, "handler")
        XCTAssertEqual(load.names.suffix(3), ["stored memory", "stored disk", "completed loader"],
                       "a load waiting for the disk write sees it")
        XCTAssertEqual(load.endings, 1)

        // A URL the manager does not load: the failure, then the end.
        let (bad, failed) = ManagerTesting.start(m, URL(string: "ftp://example.invalid/a.png"))
        await DownloadTesting.waitUntil("the failure") { failed.all.count == 1 }
        await ManagerTesting.drain(m.configuration.callbackQueue)
        let refused = try XCTUnwrap(loads.all.last)
        XCTAssertEqual(refused.task, bad.id)
        XCTAssertEqual(refused.names, ["failed 29"])
        XCTAssertEqual(refused.endings, 1)
    }

    func testCoalescedLoadsEachSeeTheSharedPipelineOnce() async throws {
        let f = try fixture
        let loads = LoadRecorder()
        let manager = EventRecorder()
        let m = try makeManager {
            $0.loadObserverFactories = [loads]
            $0.observers = [manager]
        }
        let k = unique("shared")
        let url = f.script.url("/gate_png?key=\(k)")
        let first = Task { try await loadImage(m, url, as: "a") }
        await DownloadTesting.waitUntil("the request reached the server") { (try? f.script.stats(k).count) == 1 }
        let second = Task { try await loadImage(m, url, as: "b") }
        await DownloadTesting.waitUntil("the second load waits") { m.statistics.runningTasks == 2 }
        try f.script.open(k)
        try await first.value
        try await second.value
        await ManagerTesting.assertIdle(m)
        let byRequest = Dictionary(uniqueKeysWithValues: loads.all.map { ($0.requestID ?? "", $0) })
        let a = try XCTUnwrap(byRequest["a"]), b = try XCTUnwrap(byRequest["b"])
        XCTAssertEqual(a.names, ["query memory miss", "query disk miss", "query data miss", "download",
                                 "response 200", "decode", "decoded 16x12", "stored memory", "completed loader"])
        // The second joined while the download ran: the rest of the pipeline, and its completion.
        XCTAssertEqual(b.names, ["query memory miss", "response 200", "decode", "decoded 16x12", "stored memory",
                                 "completed loader"])
        XCTAssertEqual([a.endings, b.endings], [1, 1])
        // The manager's observers see the shared work once and both completions.
        XCTAssertEqual(manager.names.filter { $0 == "decode" }.count, 1)
        XCTAssertEqual(manager.names.filter { $0 == "completed loader" }.count, 2)
    }

    func testCancelledLoadEndsOnceAndTheOtherGoesOn() async throws {
        let f = try fixture
        let loads = LoadRecorder()
        let m = try makeManager { $0.loadObserverFactories = [loads] }
        let k = unique("cancel")
        let url = f.script.url("/gate_png?key=\(k)")
        let (cancelled, _) = ManagerTesting.start(m, url)
        let (kept, completions) = ManagerTesting.start(m, url)
        await DownloadTesting.waitUntil("the request reached the server") { (try? f.script.stats(k).count) == 1 }
        cancelled.cancel()
        cancelled.cancel()
        try f.script.open(k)
        await DownloadTesting.waitUntil("the other completion") { completions.all.count == 1 }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        let byTask = Dictionary(uniqueKeysWithValues: loads.all.map { ($0.task, $0) })
        let gone = try XCTUnwrap(byTask[cancelled.id]), done = try XCTUnwrap(byTask[kept.id])
        XCTAssertEqual(gone.names.last, "cancelled")
        XCTAssertFalse(gone.names.contains("decode"))
        XCTAssertEqual(gone.endings, 1)
        XCTAssertEqual(done.names.last, "completed loader")
        XCTAssertTrue(done.names.contains("decode"))
        XCTAssertEqual(done.endings, 1)
    }

    func testRefreshedLoadEndsAfterNotModifiedWithoutASecondCompletion() async throws {
        let f = try fixture
        let path = "/\(unique("refresh")).png"
        try f.write(path, ManagerFixture.tile(5))
        let loads = LoadRecorder()
        let m = try makeManager { $0.loadObserverFactories = [loads] }
        let url = f.nginx.url(path)
        _ = try await ManagerTesting.image(m, url)
        await ManagerTesting.assertIdle(m)
        let (task, completions) = ManagerTesting.start(m, url, options: .refreshCached)
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(completions.all.count, 1)
        XCTAssertTrue(task.isFinished)
        let load = try XCTUnwrap(loads.all.last)
        XCTAssertEqual(load.task, task.id)
        XCTAssertEqual(load.names.filter { $0.hasPrefix("completed") }, ["completed memory"])
        XCTAssertTrue(load.names.contains("response 304"), "\(load.names)")
        XCTAssertEqual(load.endings, 1)
    }

    func testAFactoryMayDeclineALoad() async throws {
        let f = try fixture
        let loads = LoadRecorder(declining: true)
        let m = try makeManager { $0.loadObserverFactories = [loads] }
        let result = try await ManagerTesting.image(m, f.nginx.url("/tiles/6.png"))
        XCTAssertEqual(result.source, .loader)
        XCTAssertEqual(loads.asked, 1)
        XCTAssertTrue(loads.all.isEmpty)
    }
}

/// Loads `url` as the request `id`.
private func loadImage(_ m: ImageManager, _ url: URL, as id: String) async throws {
    try await ImageLoadObserverTests.$requestID.withValue(id) { _ = try await m.image(for: url) }
}

/// Makes a ``LoadLog`` for each load (or none, when declining) and keeps them.
private final class LoadRecorder: ImageLoadObserverFactory {
    private let logs = Collector<LoadLog>()
    private let requests = Collector<Void>()
    private let declining: Bool

    init(declining: Bool = false) {
        self.declining = declining
    }

    var all: [LoadLog] { logs.all }
    var asked: Int { requests.all.count }

    func makeObserver(task: UInt64, url: URL?) -> (any ImageLoadObserver)? {
        requests.append(())
        guard !declining else { return nil }
        let log = LoadLog(task: task, url: url, requestID: ImageLoadObserverTests.requestID)
        logs.append(log)
        return log
    }
}

/// One load's events, as its observer received them.
private final class LoadLog: ImageLoadObserver {
    let task: UInt64
    let url: URL?
    let requestID: String?
    private let events = Collector<ImageManagerEvent>()
    private let ends = Collector<Void>()
    private let late = Collector<Void>()

    init(task: UInt64, url: URL?, requestID: String?) {
        self.task = task
        self.url = url
        self.requestID = requestID
    }

    func receive(_ event: ImageManagerEvent) {
        if !ends.all.isEmpty { late.append(()) }
        events.append(event)
    }

    func loadEnded() {
        ends.append(())
    }

    var names: [String] { events.all.map(EventRecorder.name) }
    var endings: Int { ends.all.count }
    var eventsAfterEnd: Int { late.all.count }

    /// The task ids of the completion events.
    var completedTasks: [UInt64] {
        events.all.compactMap { if case .completed(let task, _, _, _) = $0 { task } else { nil } }
    }
}
