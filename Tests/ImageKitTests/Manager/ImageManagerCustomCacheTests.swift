import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// The manager over caches other than ``ImageCache``: a cache of the tests' own and a chain
/// with a shared tier of bytes. Images come from `file:` URLs, so no socket is involved.
final class ImageManagerCustomCacheTests: XCTestCase {
    private let dir = TemporaryDirectory("imagekit-custom-cache")

    private func manager(_ cache: any ImageCaching) throws -> ImageManager {
        var configuration = ImageManagerConfiguration()
        configuration.allowsLocalFiles = true
        let m = ImageManager(cache: cache, downloader: try Downloader(), configuration: configuration)
        let heldManager = ManagerShutdown(m)
        addTeardownBlock { await heldManager.run() }
        return m
    }

    /// A 30x20 PNG written to a file of its own.
    private func file(_ name: String) throws -> URL {
        let url = dir.url.appendingPathComponent(name)
        try Data(ManagerFixture.png(width: 30, height: 20)).write(to: url)
        return url
    }

    private func localCache(_ name: String) throws -> ImageCache {
        try ImageCache(namespace: name, directory: dir.url, disk: DiskCacheConfiguration(sweepInterval: nil))
    }

    func testALoadIsStoredInACustomCacheAndTheNextIsServedFromIt() async throws {
        let cache = InMemoryImageCache("custom")
        let m = try manager(cache)
        let url = try file("a.png")
        let key = try XCTUnwrap(m.cacheKey(for: url))

        let first = try await m.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(first.source, .loader)
        XCTAssertEqual(first.image.width, 30)
        XCTAssertTrue(cache.stored(key, .image, in: .memory)?.value.image === first.image)
        XCTAssertNotNil(cache.stored(key, .image, in: .disk))
        XCTAssertNotNil(cache.stored(url.absoluteString, .original, in: .disk), "the original bytes")
        XCTAssertNil(cache.stored(url.absoluteString, .original, in: .memory), "only to the disk tier")
        XCTAssertEqual(cache.log.operations("entry"), ["custom.entry \(key) image all",
                                                       "custom.entry \(url.absoluteString) original all"],
                       "a cache without a synchronous memory tier is asked for every tier")

        try FileManager.default.removeItem(at: url)
        cache.log.reset()
        let second = try await m.image(for: url)
        XCTAssertEqual(second.source, .memory)
        XCTAssertTrue(second.image === first.image)
        XCTAssertEqual(cache.log.all, ["custom.entry \(key) image all"])
    }

    func testAMemoryHitInACacheAnsweringSynchronouslyIsNoQuery() async throws {
        let cache = InMemoryImageCache("sync", synchronousMemory: true)
        let m = try manager(cache)
        let url = try XCTUnwrap(URL(string: "https://images.invalid/hit.png"))
        let image = TestPixels.image(width: 5, height: 4)
        try await cache.store(.image(image), forKey: try XCTUnwrap(m.cacheKey(for: url)), to: .memory,
                              metadata: DiskCacheMetadata())
        cache.log.reset()

        let result = try await m.image(for: url)
        XCTAssertEqual(result.source, .memory)
        XCTAssertTrue(result.image === image)
        XCTAssertEqual(cache.log.all, ["sync.memoryValue \(url.absoluteString)"])
    }

    func testFromCacheOnlyFindsWhatACustomCacheHoldsOnDisk() async throws {
        let cache = InMemoryImageCache("custom")
        let m = try manager(cache)
        let url = try XCTUnwrap(URL(string: "https://images.invalid/disk.png"))
        let image = TestPixels.image(width: 6, height: 6)
        try await cache.store(.image(image), forKey: url.absoluteString, to: .disk, metadata: DiskCacheMetadata())

        let result = try await m.image(for: url, options: .fromCacheOnly)
        XCTAssertEqual(result.source, .disk)
        XCTAssertTrue(result.image === image)
        XCTAssertTrue(cache.stored(url.absoluteString, in: .memory)?.value.image === image,
                      "stored in the memory tier the load asks for")

        let other = try XCTUnwrap(URL(string: "https://images.invalid/other.png"))
        let error = await ManagerTesting.error(m, other, options: .fromCacheOnly)
        guard error?.code == .notInCache else { return XCTFail("\(String(describing: error))") }
    }

    func testAFailingCacheNeverFailsALoad() async throws {
        let cache = InMemoryImageCache("broken")
        cache.fail(true)
        let m = try manager(cache)
        let url = try file("b.png")
        let result = try await m.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(result.source, .loader)
        XCTAssertEqual(result.image.height, 20)
        XCTAssertEqual(cache.count(.memory) + cache.count(.disk), 0)
    }

    func testTheContextsCacheReplacesTheManagers() async throws {
        let managers = InMemoryImageCache("manager's")
        let contexts = InMemoryImageCache("context's")
        let m = try manager(managers)
        let url = try file("c.png")
        _ = try await m.image(for: url, options: .waitStoreCache, context: ImageContext(cache: contexts))
        XCTAssertEqual(managers.log.all, [])
        XCTAssertEqual(contexts.count(.memory), 1)
    }

    func testAVariantStoredInASharedTierServesAnotherNodeAndIsPromotedThere() async throws {
        let shared = InMemoryByteTier()
        let format = OutputFormat.fixed(.png())
        let url = try file("shared.png")

        let localA = try localCache("node-a")
        let nodeA = try manager(ImageCachesManager(caches: [localA, ByteTierImageCache(tier: shared)],
                                                   storePolicy: .concurrent))
        let made = try await nodeA.encodedImage(for: url, as: format, options: .waitStoreCache)
        XCTAssertEqual(made.source, .loader)
        let variantKey = try XCTUnwrap(nodeA.cacheKey(for: url, as: format))
        XCTAssertEqual(shared.keys, [url.absoluteString, variantKey].sorted(), "the variant and the original bytes")

        try FileManager.default.removeItem(at: url)
        let localB = try localCache("node-b")
        let nodeB = try manager(ImageCachesManager(caches: [localB, ByteTierImageCache(tier: shared)],
                                                   storePolicy: .concurrent))
        let found = try await nodeB.encodedImage(for: url, as: format)
        XCTAssertEqual(found.source, .disk)
        XCTAssertEqual(found.encoded, made.encoded, "the same bytes, not re-encoded")
        XCTAssertNil(found.image, "nothing was decoded")
        XCTAssertEqual(localB.memoryCache.encodedImage(forKey: variantKey), made.encoded)
        let promoted = try await localB.diskCache.data(forKey: variantKey)
        XCTAssertEqual(promoted, made.encoded.data, "promoted to the local disk tier")

        let again = try await nodeB.encodedImage(for: url, as: format)
        XCTAssertEqual(again.source, .memory)
    }
}
