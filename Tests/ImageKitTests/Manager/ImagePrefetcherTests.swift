import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

final class ImagePrefetcherTests: ManagerTestCase {
    func testPrefetchWarmsTheCachesAndReportsProgress() async throws {
        let f = try fixture
        let m = try makeManager()
        let prefetcher = ImagePrefetcher(manager: m)
        XCTAssertEqual(prefetcher.maxConcurrentPrefetchCount, 3)
        XCTAssertEqual(prefetcher.options, [])
        XCTAssertEqual(prefetcher.context.priority, .low)
        let urls = (0..<8).map { f.nginx.url("/tiles/\($0).png") } + [f.nginx.url("/\(unique("missing")).png")]
        let progress = Collector<[Int]>()
        let done = Collector<[Int]>()
        let token = prefetcher.prefetch(urls, progress: { progress.append([$0, $1]) },
                                        completion: { done.append([$0, $1]) })
        await DownloadTesting.waitUntil("the list completes") { !done.all.isEmpty }
        XCTAssertEqual(done.all, [[9, 1]])
        XCTAssertEqual(progress.all, (1...9).map { [$0, 9] })
        XCTAssertEqual([token.finishedCount, token.skippedCount], [9, 1])
        XCTAssertFalse(token.isCancelled)
        await ManagerTesting.assertIdle(m)
        for url in urls.dropLast() {
            XCTAssertNotNil(m.builtInCache.memoryCache.image(forKey: url.absoluteString))
            let onDisk = await m.builtInCache.diskCache.contains(url.absoluteString)
            XCTAssertTrue(onDisk)
        }
        // Warm: every load is a memory hit, no new request.
        let warm = try await ManagerTesting.image(m, urls[0])
        XCTAssertEqual(warm.source, .memory)
        let logged = await f.requests("/tiles/0.png", atLeast: 1).count
        XCTAssertEqual(logged, 1)
    }

    func testPrefetchIntoOneTierAndAnEmptyList() async throws {
        let f = try fixture
        let m = try makeManager()
        let prefetcher = ImagePrefetcher(manager: m, maxConcurrentPrefetchCount: 1, options: [.waitStoreCache],
                                         context: ImageContext(storeCacheType: .disk))
        let url = f.nginx.url("/tiles/9.png")
        let done = Collector<[Int]>()
        prefetcher.prefetch([url], completion: { done.append([$0, $1]) })
        prefetcher.prefetch([], completion: { done.append([$0, $1]) })
        await DownloadTesting.waitUntil("both lists complete") { done.all.count == 2 }
        XCTAssertEqual(Set(done.all), [[1, 0], [0, 0]])
        await ManagerTesting.assertIdle(m)
        XCTAssertNil(m.builtInCache.memoryCache.image(forKey: url.absoluteString))
        let onDisk = await m.builtInCache.diskCache.contains(url.absoluteString)
        XCTAssertTrue(onDisk)
    }

    func testAtMostMaxConcurrentLoadsAndCancel() async throws {
        let f = try fixture
        let m = try makeManager()
        let prefetcher = ImagePrefetcher(manager: m, maxConcurrentPrefetchCount: 2)
        let keys = (0..<5).map { unique("prefetch\($0)") }
        let progress = Collector<Int>()
        let done = Collector<Int>()
        let token = prefetcher.prefetch(keys.map { f.script.url("/gate_png?key=\($0)") },
                                        progress: { n, _ in progress.append(n) }, completion: { n, _ in done.append(n) })
        try await DownloadTesting.waitUntil("two requests reach the server") {
            try keys.prefix(2).allSatisfy { try f.script.stats($0).count == 1 }
        }
        XCTAssertEqual(prefetcher.runningCount, 2)
        XCTAssertEqual(m.statistics.runningTasks, 2)
        try f.script.open(keys[0])
        try await DownloadTesting.waitUntil("the third starts") { try f.script.stats(keys[2]).count == 1 }
        XCTAssertEqual(try f.script.stats(keys[3]).count, 0)
        await DownloadTesting.waitUntil("one finished") { progress.all == [1] }
        token.cancel()
        XCTAssertTrue(token.isCancelled)
        XCTAssertEqual(prefetcher.runningCount, 0)
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(progress.all, [1])
        XCTAssertTrue(done.all.isEmpty)
        for k in keys.suffix(2) { XCTAssertEqual(try f.script.stats(k).count, 0) }
        // The prefetcher keeps working for later lists.
        let again = Collector<Int>()
        prefetcher.prefetch([f.nginx.url("/tiles/10.png")], completion: { n, _ in again.append(n) })
        await DownloadTesting.waitUntil("the later list completes") { again.all == [1] }
        prefetcher.cancelPrefetching()
        await ManagerTesting.assertIdle(m)
    }
}
