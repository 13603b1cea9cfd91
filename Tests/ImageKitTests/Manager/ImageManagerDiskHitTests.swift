import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// An `async` load the disk tier may answer reads it in its own task, without a pipeline (loads
/// of the same key arriving meanwhile wait for that read); a completion-handler load the disk
/// tier may answer starts its pipeline on the disk cache's threads, where the read runs in
/// place; other loads start on the global concurrent executor. Images come from `file:` URLs,
/// so no socket is involved.
final class ImageManagerDiskHitTests: XCTestCase {
    private let dir = TemporaryDirectory("imagekit-disk-hit")

    /// Records each event's short name with the name of the thread it was reported on and the
    /// number of pipelines the manager (once given) had in flight then.
    private final class ThreadRecorder: ImageManagerObserver, @unchecked Sendable {
        // @unchecked Sendable: `records` and `manager` are only read and written with `lock`
        // held (NSLock, which TSan sees, as in `Collector`).
        private let lock = NSLock()
        private var records: [(event: String, thread: String, jobs: Int?)] = []
        private weak var manager: ImageManager?

        func receive(_ event: ImageManagerEvent) {
            let thread = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            lock.lock()
            let jobs = manager?.statistics.jobs
            records.append((EventRecorder.name(event), thread.trimmingCharacters(in: .newlines), jobs))
            lock.unlock()
        }

        /// From now on, records how many pipelines `manager` has in flight at each event.
        func watch(_ manager: ImageManager) {
            lock.lock()
            self.manager = manager
            lock.unlock()
        }

        /// The pipelines in flight when `event` was first reported.
        func jobs(at event: String) -> Int? {
            lock.lock()
            defer { lock.unlock() }
            return records.first { $0.event == event }?.jobs
        }

        /// The events so far, in order.
        var events: [String] {
            lock.lock()
            defer { lock.unlock() }
            return records.map(\.event)
        }

        /// The thread `event` was first reported on.
        func thread(of event: String) -> String? {
            lock.lock()
            defer { lock.unlock() }
            return records.first { $0.event == event }?.thread
        }

        /// Forgets the events so far.
        func reset() {
            lock.lock()
            records = []
            lock.unlock()
        }
    }

    private func setUp(_ recorder: ThreadRecorder) throws -> (ImageManager, ImageCache, URL) {
        let cache = try ImageCache(namespace: "disk-hit", directory: dir.url,
                                   disk: DiskCacheConfiguration(sweepInterval: nil))
        var configuration = ImageManagerConfiguration()
        configuration.allowsLocalFiles = true
        configuration.observers = [recorder]
        let manager = ImageManager(cache: cache, downloader: try Downloader(), configuration: configuration)
        recorder.watch(manager)
        let held = ManagerShutdown(manager)
        addTeardownBlock { await held.run() }
        let url = dir.url.appendingPathComponent("a.png")
        try Data(ManagerFixture.png(width: 30, height: 20)).write(to: url)
        return (manager, cache, url)
    }

    /// ``setUp(_:)``, then a first load stored on disk and ended, the memory tier emptied and the
    /// events so far forgotten.
    private func setUpOnDisk(_ recorder: ThreadRecorder) async throws -> (ImageManager, URL) {
        let (manager, cache, url) = try setUp(recorder)
        let first = try await manager.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(first.source, .loader)
        await ManagerTesting.assertIdle(manager)  // the first load's pipeline has ended
        cache.memoryCache.removeAll()
        recorder.reset()
        return (manager, url)
    }

    func testAnAsyncDiskHitIsReadWithoutAPipelineWithTheSameEvents() async throws {
        let recorder = ThreadRecorder()
        let (manager, url) = try await setUpOnDisk(recorder)

        let hit = try await manager.image(for: url)
        XCTAssertEqual(hit.source, .disk)
        XCTAssertEqual(hit.image.width, 30)
        XCTAssertEqual(recorder.events,
                       ["query memory miss", "query disk hit", "stored memory", "completed disk"])
        XCTAssertEqual(recorder.jobs(at: "query disk hit"), 0, "read by the load itself, in no pipeline")
        XCTAssertNotNil(hit.metrics.diskQuery)
        XCTAssertEqual(hit.metrics.sharedBy, 1)
        let again = try await manager.image(for: url)
        XCTAssertEqual(again.source, .memory)
        XCTAssertTrue(again.image === hit.image)
        await ManagerTesting.assertIdle(manager)
    }

    func testACompletionHandlerDiskHitIsReadOnTheDiskThreadsWithTheSameEvents() async throws {
        let recorder = ThreadRecorder()
        let (manager, url) = try await setUpOnDisk(recorder)

        let hit = try await withCheckedThrowingContinuation { continuation in
            manager.loadImage(with: url) { continuation.resume(with: $0) }
        }
        XCTAssertEqual(hit.source, .disk)
        XCTAssertEqual(recorder.events,
                       ["query memory miss", "query disk hit", "stored memory", "completed disk"])
        XCTAssertEqual(recorder.thread(of: "query disk hit"), "imagekit-disk")
        XCTAssertEqual(recorder.jobs(at: "query disk hit"), 1)
    }

    func testAnEncodedLoadReadsItsVariantFromDiskWithoutAPipeline() async throws {
        let recorder = ThreadRecorder()
        let (manager, cache, url) = try setUp(recorder)
        var context = ImageContext(thumbnailPixelSize: PixelSize(square: 16))
        context.encodedStoreCacheType = .all
        let first = try await manager.encodedImage(for: url, as: .fixed(.png()), options: .waitStoreCache,
                                                   context: context)
        XCTAssertEqual(first.source, .loader)
        await ManagerTesting.assertIdle(manager)  // the first load's pipeline has ended
        cache.memoryCache.removeAll()
        recorder.reset()

        let hit = try await manager.encodedImage(for: url, as: .fixed(.png()), context: context)
        XCTAssertEqual(hit.source, .disk)
        XCTAssertEqual(hit.encoded.data, first.encoded.data)
        XCTAssertEqual(recorder.jobs(at: "query disk hit"), 0)
        XCTAssertEqual(recorder.events,
                       ["query memory miss", "query disk hit", "stored memory", "completed disk"])
        let again = try await manager.encodedImage(for: url, as: .fixed(.png()), context: context)
        XCTAssertEqual(again.source, .memory, "the variant was kept in memory")
    }

    func testACoalescedDiskHitReachesEveryLoad() async throws {
        let recorder = ThreadRecorder()
        let (manager, url) = try await setUpOnDisk(recorder)

        async let a = manager.image(for: url)
        async let b = manager.image(for: url)
        let (ra, rb) = try await (a, b)
        XCTAssertEqual(ra.image.width, 30)
        XCTAssertEqual(rb.image.width, 30)
        XCTAssertEqual(Set([ra.source, rb.source]).subtracting([.memory]), [.disk])
        XCTAssertEqual(recorder.events.filter { $0 == "query disk hit" }.count, 1, "one disk read for both")
    }

    func testAColdLoadDoesNotStartOnTheDiskThreads() async throws {
        let recorder = ThreadRecorder()
        let (manager, _, url) = try setUp(recorder)
        let result = try await manager.image(for: url)
        XCTAssertEqual(result.source, .loader)
        XCTAssertNotNil(recorder.thread(of: "download"))
        XCTAssertNotEqual(recorder.thread(of: "download"), "imagekit-disk")
    }

    func testARefreshedLoadDoesNotStartOnTheDiskThreads() async throws {
        let recorder = ThreadRecorder()
        let (manager, url) = try await setUpOnDisk(recorder)

        _ = try await manager.image(for: url, options: .refreshCached)
        XCTAssertNotNil(recorder.thread(of: "query disk hit"))
        XCTAssertNotEqual(recorder.thread(of: "query disk hit"), "imagekit-disk")
    }

    // MARK: - Direct reads over a cache whose reads can be held

    /// A manager over a cache of the tests' own that names a read executor (so `async` loads read
    /// it directly), holding a 30x20 image on its "disk" under the key of `url`.
    private func gatedSetUp() throws -> (ImageManager, InMemoryImageCache, URL, String) {
        let cache = InMemoryImageCache("gated", synchronousMemory: true, readExecutor: globalConcurrentExecutor)
        var configuration = ImageManagerConfiguration()
        configuration.allowsLocalFiles = true
        let manager = ImageManager(cache: cache, downloader: try Downloader(), configuration: configuration)
        let held = ManagerShutdown(manager)
        addTeardownBlock { await held.run() }
        let url = dir.url.appendingPathComponent("gated.png")
        try Data(ManagerFixture.png(width: 30, height: 20)).write(to: url)
        let key = try XCTUnwrap(manager.cacheKey(for: url))
        return (manager, cache, url, key)
    }

    func testLoadsArrivingDuringADirectReadWaitForItsAnswer() async throws {
        let (manager, cache, url, key) = try gatedSetUp()
        try await cache.store(.image(TestPixels.image(width: 30, height: 20)), forKey: key, to: .disk,
                              metadata: DiskCacheMetadata())
        cache.log.reset()
        cache.gateQueries()
        let reader = Task { try await manager.image(for: url) }
        await DownloadTesting.waitUntil("the first load reads") { cache.log.operations("entry").count == 1 }
        let waiting = Task { try await manager.image(for: url) }
        let cancelled = Task { try await manager.image(for: url) }
        await DownloadTesting.waitUntil("three loads run") { manager.statistics.runningTasks == 3 }
        XCTAssertEqual(manager.statistics.jobs, 0)
        cancelled.cancel()
        cache.release()

        let first = try await reader.value
        let second = try await waiting.value
        XCTAssertEqual([first.source, second.source], [.disk, .disk])
        XCTAssertTrue(first.image === second.image, "one read's image")
        XCTAssertEqual(first.metrics.sharedBy, 3)
        do {
            _ = try await cancelled.value
            XCTFail("a cancelled load returned an image")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertEqual(cache.log.operations("entry"), ["gated.entry \(key) image disk"], "one read for all three")
        XCTAssertEqual(cache.log.operations("store"), ["gated.store \(key) image memory"])
        await ManagerTesting.assertIdle(manager)
    }

    func testADirectReadThatMissesGoesOnThroughOnePipelineWithoutAskingAgain() async throws {
        let (manager, cache, url, key) = try gatedSetUp()
        let result = try await manager.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(result.source, .loader)
        XCTAssertEqual(cache.log.operations("entry"), ["gated.entry \(key) image disk",
                                                       "gated.entry \(url.absoluteString) original disk"],
                       "the image is asked for once, by the direct read")
        XCTAssertNotNil(cache.stored(key, .image, in: .disk))
        await ManagerTesting.assertIdle(manager)
    }
}
