import Foundation
import ImageKit
import XCTest

/// ``ImageCache`` through ``ImageCaching``: what each tier keeps of each kind, and what the
/// protocol's calls find, check and remove.
final class ImageCacheCachingTests: XCTestCase {
    private func open(_ dir: TemporaryDirectory) throws -> ImageCache {
        try ImageCache(namespace: "test", directory: dir.url, memory: MemoryCacheConfiguration(costLimit: 64 << 20),
                       disk: DiskCacheConfiguration(sweepInterval: nil))
    }

    func testEachKindRoundTripsThroughItsTiers() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let caching: any ImageCaching = cache
        let image = TestPixels.image(width: 20, height: 10)
        let encoded = try await ImageEncoder.encodedImage(image, as: .png())
        let original = Data(encoded.data.reversed())
        let metadata = DiskCacheMetadata(etag: "\"e\"", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT")

        try await caching.store(.image(image), forKey: "i", to: .all, metadata: metadata)
        try await caching.store(.variant(encoded), forKey: "v", to: .all, metadata: metadata)
        try await caching.store(.original(original), forKey: "o", to: .all, metadata: metadata)

        XCTAssertTrue(caching.answersMemoryQueriesSynchronously)
        XCTAssertTrue(caching.memoryValue(forKey: "i", kind: .image)?.image === image)
        XCTAssertEqual(caching.memoryValue(forKey: "v", kind: .variant)?.variant, encoded)
        XCTAssertNil(caching.memoryValue(forKey: "o", kind: .original), "the memory tier keeps no original bytes")
        XCTAssertNil(caching.memoryValue(forKey: "i", kind: .variant), "another kind")
        XCTAssertNotNil(cache.memoryCache.image(forKey: "i"))

        var hit = try await caching.entry(forKey: "i", kind: .image, from: .all)
        XCTAssertEqual(hit?.tier, .memory)
        hit = try await caching.entry(forKey: "i", kind: .image, from: .disk)
        XCTAssertEqual(hit?.tier, .disk)
        XCTAssertEqual(hit?.value.image?.packedPixels(), image.packedPixels())
        XCTAssertEqual(hit?.metadata, metadata)
        hit = try await caching.entry(forKey: "v", kind: .variant, from: .disk)
        XCTAssertEqual(hit?.value.variant, encoded)
        XCTAssertEqual(hit?.metadata.etag, "\"e\"")
        hit = try await caching.entry(forKey: "o", kind: .original, from: .all)
        XCTAssertEqual(hit?.tier, .disk)
        XCTAssertEqual(hit?.value.original, original)
        hit = try await caching.entry(forKey: "o", kind: .original, from: .memory)
        XCTAssertNil(hit)

        for (key, kind) in [("i", ImageCacheEntryKind.image), ("v", .variant), ("o", .original)] {
            let onDisk = await caching.contains(key, kind: kind, in: .disk)
            XCTAssertTrue(onDisk, "\(kind) on disk")
            let metadataFound = await caching.metadata(forKey: key, kind: kind, from: .all)
            XCTAssertEqual(metadataFound, metadata, "\(kind)'s metadata")
        }
        let inMemory = await caching.contains("o", kind: .original, in: .memory)
        XCTAssertFalse(inMemory)
        let variantAsImage = await caching.contains("v", kind: .image, in: .memory)
        XCTAssertFalse(variantAsImage, "the memory tier checks the entry's kind")
        let variantInMemory = await caching.contains("v", kind: .variant, in: .memory)
        XCTAssertTrue(variantInMemory)
    }

    func testADiskHitIsNotCopiedToMemoryAndExpiredEntriesAreMisses() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let image = TestPixels.image(width: 8, height: 8)
        try await cache.store(.image(image), forKey: "d", to: .disk, metadata: DiskCacheMetadata())
        let hit = try await cache.entry(forKey: "d", kind: .image, from: .all)
        XCTAssertEqual(hit?.tier, .disk)
        XCTAssertNil(cache.memoryCache.image(forKey: "d"), "the query only reads")

        let past = DiskCacheMetadata(etag: "\"old\"", expires: Date(timeIntervalSinceNow: -60))
        try await cache.store(.original(Data([1, 2])), forKey: "x", to: .disk, metadata: past)
        let expired = try await cache.entry(forKey: "x", kind: .original, from: .all)
        XCTAssertNil(expired)
        let metadata = await cache.metadata(forKey: "x", kind: .original, from: .all)
        XCTAssertEqual(metadata?.etag, "\"old\"", "an expired entry's validators are still there to revalidate with")
    }

    func testRemoveAndClearGoThroughTheProtocol() async throws {
        let dir = TemporaryDirectory()
        let caching: any ImageCaching = try open(dir)
        let image = TestPixels.image(width: 8, height: 8)
        try await caching.store(.image(image), forKey: "k", to: .all, metadata: DiskCacheMetadata())
        try await caching.store(.original(Data([3])), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        try await caching.store(.image(image), forKey: "other", to: .all, metadata: DiskCacheMetadata())

        try await caching.remove(forKey: "k", from: .disk)
        var onDisk = await caching.contains("k", kind: .image, in: .disk)
        XCTAssertFalse(onDisk)
        onDisk = await caching.contains("k", kind: .original, in: .disk)
        XCTAssertFalse(onDisk, "the bytes under the key went with the bitmap")
        XCTAssertNotNil(caching.memoryValue(forKey: "k", kind: .image), "the memory tier was not asked")

        try await caching.clear(.all)
        XCTAssertNil(caching.memoryValue(forKey: "other", kind: .image))
        onDisk = await caching.contains("other", kind: .image, in: .disk)
        XCTAssertFalse(onDisk)
    }
}
