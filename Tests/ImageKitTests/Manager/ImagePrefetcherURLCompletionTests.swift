import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// ``ImagePrefetcher``'s per-URL handler, over a loader of the tests' own (no socket).
final class ImagePrefetcherURLCompletionTests: XCTestCase {
    private func manager(_ loader: ScriptedLoader) -> ImageManager {
        let m = ImageManager(cache: InMemoryImageCache("cache"), loader: loader)
        let heldManager = ManagerShutdown(m)
        addTeardownBlock { await heldManager.run() }
        return m
    }

    func testEachURLsOutcomeIsReportedBeforeTheProgress() async throws {
        let loader = ScriptedLoader()
        loader.put("/a.png", ManagerFixture.png(width: 4, height: 3))
        loader.put("/b.png", ManagerFixture.png(width: 5, height: 3))
        let m = manager(loader)
        let prefetcher = ImagePrefetcher(manager: m, maxConcurrentPrefetchCount: 1)
        let urls = [loader.url("/a.png"), loader.url("/missing.png"), loader.url("/b.png")]
        let calls = Collector<String>()
        let done = Collector<[Int]>()
        prefetcher.prefetch(urls, urlCompleted: { url, result, finished, total in
            let outcome = switch result {
            case .success(let r): "\(r.image.width)x\(r.image.height)"
            case .failure(let e): e.message
            }
            calls.append("\(url.path) \(outcome) \(finished)/\(total)")
        }, progress: { finished, total in
            calls.append("progress \(finished)/\(total)")
        }, completion: { done.append([$0, $1]) })
        await DownloadTesting.waitUntil("the list completes") { !done.all.isEmpty }
        XCTAssertEqual(calls.all, ["/a.png 4x3 1/3", "progress 1/3",
                                   "/missing.png nothing stored at /missing.png 2/3", "progress 2/3",
                                   "/b.png 5x3 3/3", "progress 3/3"])
        XCTAssertEqual(done.all, [[3, 1]])
    }

    func testACancelledListReportsNoURL() async throws {
        let loader = ScriptedLoader()
        loader.put("/slow.png", ManagerFixture.png(width: 4, height: 3))
        loader.hold("/slow.png")
        let m = manager(loader)
        let prefetcher = ImagePrefetcher(manager: m)
        let calls = Collector<URL>()
        let token = prefetcher.prefetch([loader.url("/slow.png")], urlCompleted: { url, _, _, _ in calls.append(url) })
        await DownloadTesting.waitUntil("the loader is asked") { loader.requests.count == 1 }
        token.cancel()
        await DownloadTesting.waitUntil("the loader sees the cancellation") { loader.cancelled.count == 1 }
        await DownloadTesting.waitUntil("the manager is idle") { m.statistics.isIdle }
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(calls.all, [])
        XCTAssertTrue(token.isCancelled)
    }
}
