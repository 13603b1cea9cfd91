import Foundation
import ImageKit
import TestServers
import XCTest

/// A refreshed load revalidates with the validators a cache of the tests' own kept (through
/// ``ImageCaching``'s default ``ImageCaching/metadata(forKey:kind:from:)``): nginx answers 304.
final class CustomCacheRevalidationTests: ManagerTestCase {
    func testARefreshRevalidatesWithTheCustomCachesValidators() async throws {
        let f = try fixture
        let path = "/\(unique("custom-refresh")).png"
        try f.write(path, ManagerFixture.tile(2))
        let cache = InMemoryImageCache("custom")
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DownloadTesting.loopback
        let m = ImageManager(cache: cache, downloader: try Downloader(configuration: downloads))
        let url = f.nginx.url(path)

        let first = try await m.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(first.source, .loader)
        let etag = cache.stored(url.absoluteString, .original, in: .disk)?.metadata.etag
        XCTAssertNotNil(etag, "the original bytes were kept with the response's ETag")

        let refreshed = try await m.image(for: url, options: .refreshCached)
        XCTAssertEqual(refreshed.source, .memory, "current: the cached image")
        XCTAssertTrue(refreshed.image === first.image)
        let log = await f.requests(path, atLeast: 2)
        XCTAssertTrue(log[1].contains("\" 304 "), log[1])
        await ManagerTesting.assertIdle(m)
        await m.shutdown()
    }
}
