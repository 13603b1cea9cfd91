import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// A load the disk tier may answer starts its pipeline on the disk cache's threads, where the
/// read runs in place; other loads start on the global concurrent executor. Images come from
/// `file:` URLs, so no socket is involved.
final class ImageManagerDiskHitTests: XCTestCase {
    private let dir = TemporaryDirectory("imagekit-disk-hit")

    /// Records each event's short name with the name of the thread it was reported on.
    private final class ThreadRecorder: ImageManagerObserver, @unchecked Sendable {
        // @unchecked Sendable: `records` is only read and written with `lock` held (NSLock,
        // which TSan sees, as in `Collector`).
        private let lock = NSLock()
        private var records: [(event: String, thread: String)] = []

        func receive(_ event: ImageManagerEvent) {
            let thread = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            let record = (EventRecorder.name(event), thread.trimmingCharacters(in: .newlines))
            lock.lock()
            records.append(record)
            lock.unlock()
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
        let held = ManagerShutdown(manager)
        addTeardownBlock { await held.run() }
        let url = dir.url.appendingPathComponent("a.png")
        try Data(ManagerFixture.png(width: 30, height: 20)).write(to: url)
        return (manager, cache, url)
    }

    func testADiskHitIsReadOnTheDiskThreadsWithTheSameEvents() async throws {
        let recorder = ThreadRecorder()
        let (manager, cache, url) = try setUp(recorder)
        let first = try await manager.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(first.source, .loader)
        cache.memoryCache.removeAll()
        recorder.reset()

        let hit = try await manager.image(for: url)
        XCTAssertEqual(hit.source, .disk)
        XCTAssertEqual(hit.image.width, 30)
        XCTAssertEqual(recorder.events,
                       ["query memory miss", "query disk hit", "stored memory", "completed disk"])
        XCTAssertEqual(recorder.thread(of: "query disk hit"), "imagekit-disk")
        XCTAssertNotNil(hit.metrics.diskQuery)
        let again = try await manager.image(for: url)
        XCTAssertEqual(again.source, .memory)
        XCTAssertTrue(again.image === hit.image)
    }

    func testACoalescedDiskHitReachesEveryLoad() async throws {
        let recorder = ThreadRecorder()
        let (manager, cache, url) = try setUp(recorder)
        _ = try await manager.image(for: url, options: .waitStoreCache)
        cache.memoryCache.removeAll()
        recorder.reset()

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
        let (manager, cache, url) = try setUp(recorder)
        _ = try await manager.image(for: url, options: .waitStoreCache)
        cache.memoryCache.removeAll()
        recorder.reset()

        _ = try await manager.image(for: url, options: .refreshCached)
        XCTAssertNotNil(recorder.thread(of: "query disk hit"))
        XCTAssertNotEqual(recorder.thread(of: "query disk hit"), "imagekit-disk")
    }
}
