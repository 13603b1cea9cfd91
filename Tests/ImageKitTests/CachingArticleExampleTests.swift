import Foundation
import ImageKit
import ImageKitTestSupport
import Synchronization
import XCTest

// ARTICLE-CACHING-BEGIN
/// A shared tier: any store of bytes by key (a dictionary here; Redis or memcached in a fleet).
final class SharedTier: ByteCacheTier {
    private let entries = Mutex<[String: Data]>([:])

    func data(forKey key: String) async throws -> Data? { entries.withLock { $0[key] } }
    func setData(_ data: Data, forKey key: String, expires: Date?) async throws { entries.withLock { $0[key] = data } }
    func removeData(forKey key: String) async throws { _ = entries.withLock { $0.removeValue(forKey: key) } }
    func containsData(forKey key: String) async -> Bool { entries.withLock { $0[key] != nil } }
    func removeAllData() async throws { entries.withLock { $0.removeAll() } }
}

func makeManager(cacheDirectory: URL, shared: SharedTier) throws -> ImageManager {
    let caches = ImageCachesManager(
        caches: [try ImageCache(namespace: "thumbs", directory: cacheDirectory),  // memory + disk, asked first
                 ByteTierImageCache(tier: shared, keyPrefix: "thumbs:")],         // variants and original bytes
        storePolicy: .concurrent)  // write to both; a hit in the shared tier is copied to the local one
    return ImageManager(cache: caches, downloader: try Downloader())
}
// ARTICLE-CACHING-END

/// Runs the caching example of the CachingTiers article and checks the article shows exactly this code.
final class CachingArticleExampleTests: XCTestCase {
    func testExampleRuns() async throws {
        let directory = TemporaryDirectory("readme-caching")
        let shared = SharedTier()
        let manager = try makeManager(cacheDirectory: directory.url, shared: shared)
        let shutdownManager = ManagerShutdown(manager)
        addTeardownBlock { await shutdownManager.run() }
        let encoded = try await ImageEncoder.encodedImage(TestPixels.image(width: 10, height: 10), as: .png())
        try await manager.cache.store(.variant(encoded), forKey: "v", to: .all, metadata: DiskCacheMetadata())
        let inShared = await shared.containsData(forKey: "thumbs:v")
        XCTAssertTrue(inShared, "written through to the shared tier")

        let other = try makeManager(cacheDirectory: directory.url.appendingPathComponent("other"), shared: shared)
        let shutdownOther = ManagerShutdown(other)
        addTeardownBlock { await shutdownOther.run() }
        let hit = try await other.cache.entry(forKey: "v", kind: .variant, from: .disk)
        XCTAssertEqual(hit?.value.variant, encoded, "another node finds it in the shared tier")
        let local = try XCTUnwrap((other.cache as? ImageCachesManager)?.caches.first)
        let promoted = await local.contains("v", kind: .variant, in: .disk)
        XCTAssertTrue(promoted, "and keeps it on its local disk")
    }

    func testArticleShowsThisCode() throws {
        try ArticleExample.assertShown("ARTICLE-CACHING", from: #filePath, inArticle: "CachingTiers")
    }
}
