import Foundation
import ImageKit
import XCTest

/// What a load holds after it ends: nothing. Download bodies are the large part (a service
/// loading 3 MB originals holds one per load in flight), so the tests count the bytes the
/// downloader's body allocator has handed out and not got back.
final class ImageManagerMemoryTests: ManagerTestCase {
    /// Loads keep arriving, `window` at a time, onto one decode thread, so decode jobs queue
    /// behind each other without the queue ever running dry: the bodies held must follow the
    /// loads in flight, not the loads so far.
    func testBodiesAreReleasedWhileLoadsKeepArriving() async throws {
        let fixture = try fixture
        let manager = try makeManager { $0.decodeThreads = 1 }
        let body = ManagerFixture.large.count
        let window = 8, total = 120
        let run = unique("same")
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 64), storeCacheType: ImageCacheType.none,
                                   originalStoreCacheType: ImageCacheType.none)
        let samples = Collector<DownloaderStatistics>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<total {
                if i >= window { try await group.next() }
                group.addTask {
                    let url = fixture.nginx.url("/same/\(run)-\(i).jpg")
                    _ = try await manager.image(for: url, context: context)
                    samples.append(manager.downloader.statistics)
                }
            }
            try await group.waitForAll()
        }
        let bodies = samples.all.map(\.bodies).max() ?? 0
        let bytes = samples.all.map(\.bodyBytes).max() ?? 0
        // In flight: `window` loads, each with at most one body (downloading, queued or decoding).
        XCTAssertLessThanOrEqual(bodies, window, "bodies held at the peak (\(total) loads of a \(body)-byte body)")
        XCTAssertLessThanOrEqual(bytes, window * (body + 64 << 10), "body bytes held at the peak")
        await DownloadTesting.waitUntil("every body is released") { manager.downloader.statistics.bodies == 0 }
        XCTAssertEqual(manager.downloader.statistics.bodyBytes, 0)
        await ManagerTesting.assertIdle(manager)
    }
}
