import Foundation
import ImageKit
import XCTest

final class ImageCacheTests: XCTestCase {
    private func open(_ dir: TemporaryDirectory, namespace: String = "test") throws -> ImageCache {
        try ImageCache(namespace: namespace, directory: dir.url,
                       memory: MemoryCacheConfiguration(costLimit: 64 << 20),
                       disk: DiskCacheConfiguration(sweepInterval: nil))
    }

    func testLookupReportsTheTierAndPromotesDiskHits() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let image = TestPixels.image(width: 40, height: 30)

        var found = try await cache.image(forKey: "k")
        XCTAssertNil(found)

        try await cache.store(image, forKey: "k", to: .disk)
        XCTAssertFalse(cache.memoryCache.contains("k"))
        found = try await cache.image(forKey: "k", from: .memory)
        XCTAssertEqual(found?.tier, nil)
        found = try await cache.image(forKey: "k")
        XCTAssertEqual(found?.tier, .disk)
        XCTAssertEqual(found?.image.packedPixels(), image.packedPixels())
        found = try await cache.image(forKey: "k")
        XCTAssertEqual(found?.tier, .memory, "a disk hit is promoted to memory")

        try await cache.store(image, forKey: "m", to: .memory)
        found = try await cache.image(forKey: "m", from: .disk)
        XCTAssertEqual(found?.tier, nil)
        found = try await cache.image(forKey: "m")
        XCTAssertTrue(found?.image === image)
        XCTAssertEqual(found?.tier, .memory)
    }

    func testContainsRemoveAndClearPerTier() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let image = TestPixels.image(width: 8, height: 8)
        try await cache.store(image, forKey: "a")
        try await cache.store(image, forKey: "b")
        var inMemory = await cache.contains("a", in: .memory)
        var onDisk = await cache.contains("a", in: .disk)
        XCTAssertTrue(inMemory)
        XCTAssertTrue(onDisk)

        try await cache.remove(forKey: "a", from: .memory)
        inMemory = await cache.contains("a", in: .memory)
        var anywhere = await cache.contains("a")
        XCTAssertFalse(inMemory)
        XCTAssertTrue(anywhere)
        try await cache.remove(forKey: "a")
        anywhere = await cache.contains("a")
        XCTAssertFalse(anywhere)

        try await cache.clear(.memory)
        XCTAssertEqual(cache.memoryCache.totalCount, 0)
        onDisk = await cache.contains("b", in: .disk)
        XCTAssertTrue(onDisk)
        var count = await cache.totalDiskCount
        XCTAssertEqual(count, 1)
        try await cache.clear()
        count = await cache.totalDiskCount
        let size = await cache.totalDiskSize
        XCTAssertEqual(count, 0)
        XCTAssertEqual(size, 0)
    }

    func testOriginalBytesRoundTrip() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let original = Data("\u{89}PNG not really".utf8)
        try await cache.storeOriginalData(original, forKey: "k", metadata: DiskCacheMetadata(etag: "\"1\""))
        let data = try await cache.originalData(forKey: "k")
        XCTAssertEqual(data, original)
        let found = try await cache.image(forKey: "k")
        XCTAssertEqual(found?.tier, nil, "original bytes are not a decoded image")
        let size = await cache.totalDiskSize
        XCTAssertGreaterThan(size, original.count)
    }

    func testExpiryAppliesToBothTiers() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let past = DiskCacheMetadata(expires: Date(timeIntervalSinceNow: -5))
        try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "old", metadata: past)
        let found = try await cache.image(forKey: "old")
        XCTAssertEqual(found?.tier, nil)
        let future = DiskCacheMetadata(expires: Date(timeIntervalSinceNow: 3600))
        try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "new", metadata: future)
        let fresh = try await cache.image(forKey: "new")
        XCTAssertEqual(fresh?.tier, .memory)
    }

    func testNamespacesAreSeparateFolders() async throws {
        let dir = TemporaryDirectory()
        let a = try open(dir, namespace: "avatars")
        let b = try open(dir, namespace: "banners")
        try await a.store(TestPixels.image(width: 8, height: 8), forKey: "k", to: .disk)
        let inB = await b.contains("k")
        XCTAssertFalse(inB)
        XCTAssertEqual(a.diskCache.directory.lastPathComponent, "avatars")
        XCTAssertEqual(Set(dir.files()), ["avatars", "banners"])
        for bad in ["", ".", "..", "a/b"] {
            XCTAssertThrowsError(try ImageCache(namespace: bad, directory: dir.url), bad)
        }
    }

    func testDefaultDirectoryFollowsXDGCacheHome() {
        let saved = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"]
        defer {
            if let saved { setenv("XDG_CACHE_HOME", saved, 1) } else { unsetenv("XDG_CACHE_HOME") }
        }
        setenv("XDG_CACHE_HOME", "/var/cache/service", 1)
        XCTAssertEqual(ImageCache.defaultDirectory.path, "/var/cache/service/ImageKit")
        unsetenv("XDG_CACHE_HOME")
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        XCTAssertEqual(ImageCache.defaultDirectory.path, home + "/.cache/ImageKit")
    }
}
