import Foundation
@testable import ImageKit
import XCTest

/// ``ImageCachesManager`` over test caches: the order and reach of each operation under each
/// policy, promotion, and failing caches.
final class ImageCachesManagerTests: XCTestCase {
    private let log = CacheCallLog()

    private func caches(_ names: String..., synchronousMemory: Bool = false) -> [InMemoryImageCache] {
        names.map { InMemoryImageCache($0, log: log, synchronousMemory: synchronousMemory) }
    }

    private func image(_ seed: UInt64) -> Image {
        TestPixels.image(width: 8, height: 6, seed: seed)
    }

    func testDefaultsAreSDWebImages() {
        let m = ImageCachesManager(caches: [])
        XCTAssertEqual(m.queryPolicy, .serial)
        XCTAssertEqual(m.storePolicy, .highestOnly)
        XCTAssertEqual(m.removePolicy, .concurrent)
        XCTAssertEqual(m.containsPolicy, .serial)
        XCTAssertEqual(m.clearPolicy, .concurrent)
        XCTAssertTrue(m.promotesHits)
    }

    func testSerialQueryAsksInOrderAndStopsAtTheFirstHit() async throws {
        let c = caches("upper", "lower")
        let m = ImageCachesManager(caches: c, promotesHits: false)

        var hit = try await m.entry(forKey: "k", kind: .image, from: .all)
        XCTAssertNil(hit)
        XCTAssertEqual(log.all, ["upper.entry k image all", "lower.entry k image all"])

        let lowerImage = image(2)
        try await c[1].store(.image(lowerImage), forKey: "k", to: .disk, metadata: DiskCacheMetadata(etag: "\"l\""))
        log.reset()
        hit = try await m.entry(forKey: "k", kind: .image, from: .all)
        XCTAssertTrue(hit?.value.image === lowerImage)
        XCTAssertEqual(hit?.tier, .disk)
        XCTAssertEqual(hit?.metadata.etag, "\"l\"")
        XCTAssertEqual(log.all, ["upper.entry k image all", "lower.entry k image all"])

        let upperImage = image(1)
        try await c[0].store(.image(upperImage), forKey: "k", to: .memory, metadata: DiskCacheMetadata())
        log.reset()
        hit = try await m.entry(forKey: "k", kind: .image, from: .all)
        XCTAssertTrue(hit?.value.image === upperImage)
        XCTAssertEqual(hit?.tier, .memory)
        XCTAssertEqual(log.all, ["upper.entry k image all"], "the lower cache is not asked after a hit")

        hit = try await m.entry(forKey: "k", kind: .variant, from: .all)
        XCTAssertNil(hit, "an entry of another kind is no hit")
    }

    func testHighestOnlyAndLowestOnlyQueryOneCache() async throws {
        let c = caches("upper", "lower")
        try await c[1].store(.original(Data([1, 2, 3])), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        log.reset()

        let highest = ImageCachesManager(caches: c, queryPolicy: .highestOnly)
        var hit = try await highest.entry(forKey: "k", kind: .original, from: .all)
        XCTAssertNil(hit)
        XCTAssertEqual(log.all, ["upper.entry k original all"])

        log.reset()
        let lowest = ImageCachesManager(caches: c, queryPolicy: .lowestOnly, promotesHits: false)
        hit = try await lowest.entry(forKey: "k", kind: .original, from: .all)
        XCTAssertEqual(hit?.value.original, Data([1, 2, 3]))
        XCTAssertEqual(log.all, ["lower.entry k original all"])
    }

    func testConcurrentQueryAnswersWithTheFirstHitToArrive() async throws {
        let c = caches("upper", "lower")
        let upperImage = image(1), lowerImage = image(2)
        try await c[0].store(.image(upperImage), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        try await c[1].store(.image(lowerImage), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        c[0].holdQueries(true)  // answers only when cancelled
        let m = ImageCachesManager(caches: c, queryPolicy: .concurrent, promotesHits: false)

        let start = ContinuousClock.now
        let hit = try await m.entry(forKey: "k", kind: .image, from: .disk)
        XCTAssertTrue(hit?.value.image === lowerImage, "the lower cache answered first")
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "the held query was cancelled")
        XCTAssertEqual(Set(log.operations("entry")), ["upper.entry k image disk", "lower.entry k image disk"])

        // Serially, the upper cache's hit wins.
        c[0].holdQueries(false)
        let serial = ImageCachesManager(caches: c, promotesHits: false)
        let first = try await serial.entry(forKey: "k", kind: .image, from: .disk)
        XCTAssertTrue(first?.value.image === upperImage)
    }

    func testConcurrentQueriesAndChecksDoNotWaitForASlowCache() async throws {
        let c = caches("slow", "fast")
        let fastImage = image(2)
        try await c[1].store(.image(fastImage), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        c[0].gateQueries()  // held until released, cancelled or not
        let releaser = Task {
            try? await Task.sleep(for: .seconds(5))
            c[0].release()
        }
        defer { releaser.cancel(); c[0].release() }
        let m = ImageCachesManager(caches: c, queryPolicy: .concurrent, containsPolicy: .concurrent, promotesHits: false)

        let start = ContinuousClock.now
        let hit = try await m.entry(forKey: "k", kind: .image, from: .disk)
        XCTAssertTrue(hit?.value.image === fastImage)
        let yes = await m.contains("k", kind: .image, in: .disk)
        XCTAssertTrue(yes)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(4), "answered while the slow cache was still held")
    }

    func testCancellingAConcurrentQueryCancelsEveryCachesQuery() async throws {
        let c = caches("upper", "lower")
        for cache in c { cache.holdQueries(true) }  // answer only when cancelled
        let m = ImageCachesManager(caches: c, queryPolicy: .concurrent)
        let query = Task { try await m.entry(forKey: "k", kind: .image, from: .all) }
        while log.operations("entry").count < 2 { try await Task.sleep(for: .milliseconds(1)) }
        let start = ContinuousClock.now
        query.cancel()
        let result = await query.result
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10))
        XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
    }

    func testAHitInALowerCacheIsPromotedToTheCachesAboveIt() async throws {
        let c = caches("a", "b", "c")
        let metadata = DiskCacheMetadata(etag: "\"v1\"", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT")
        let encoded = try await ImageEncoder.encodedImage(image(3), as: .png())
        try await c[2].store(.variant(encoded), forKey: "v", to: .disk, metadata: metadata)
        let m = ImageCachesManager(caches: c)

        let hit = try await m.entry(forKey: "v", kind: .variant, from: .disk)
        XCTAssertEqual(hit?.value.variant, encoded)
        for cache in c[0...1] {
            XCTAssertEqual(cache.stored("v", in: .disk)?.value.variant, encoded, "promoted to \(cache.name)")
            XCTAssertEqual(cache.stored("v", in: .disk)?.metadata, metadata, "with its metadata")
            XCTAssertNil(cache.stored("v", in: .memory), "only into the tiers queried")
        }

        // A hit in the middle reaches only the cache above it.
        let original = Data([9, 9])
        try await c[1].store(.original(original), forKey: "o", to: .all, metadata: DiskCacheMetadata())
        _ = try await m.entry(forKey: "o", kind: .original, from: .all)
        XCTAssertEqual(c[0].stored("o", in: .memory)?.value.original, original)
        XCTAssertEqual(c[0].stored("o", in: .disk)?.value.original, original)
        XCTAssertNil(c[2].stored("o", in: .disk), "never to the caches below")

        // Promotion off: the hit stays where it was.
        try await c[2].store(.original(original), forKey: "p", to: .disk, metadata: DiskCacheMetadata())
        let unpromoted = ImageCachesManager(caches: c, promotesHits: false)
        let found = try await unpromoted.entry(forKey: "p", kind: .original, from: .disk)
        XCTAssertEqual(found?.value.original, original)
        XCTAssertNil(c[0].stored("p", in: .disk))
        XCTAssertNil(c[1].stored("p", in: .disk))
    }

    func testStoreReachesTheCachesOfItsPolicy() async throws {
        let value = ImageCacheValue.original(Data([7]))
        for (policy, reached) in [(ImageCacheOperationPolicy.highestOnly, [true, false]), (.lowestOnly, [false, true]),
                                  (.serial, [true, true]), (.concurrent, [true, true])] {
            let c = caches("upper", "lower")
            let m = ImageCachesManager(caches: c, storePolicy: policy)
            try await m.store(value, forKey: "k", to: .disk, metadata: DiskCacheMetadata())
            XCTAssertEqual(c.map { $0.stored("k", in: .disk) != nil }, reached, "\(policy)")
        }
    }

    func testSerialStoresOneAfterTheOtherAndConcurrentStoresAtOnce() async throws {
        let c = caches("upper", "lower")
        for cache in c { cache.delayStores(.milliseconds(200)) }
        let value = ImageCacheValue.original(Data([7]))

        try await ImageCachesManager(caches: c, storePolicy: .serial)
            .store(value, forKey: "s", to: .disk, metadata: DiskCacheMetadata())
        XCTAssertEqual(log.all, ["upper.store s original disk", "upper.stored s",
                                 "lower.store s original disk", "lower.stored s"])

        log.reset()
        try await ImageCachesManager(caches: c, storePolicy: .concurrent)
            .store(value, forKey: "c", to: .disk, metadata: DiskCacheMetadata())
        let calls = log.all
        XCTAssertEqual(Set(calls.prefix(2)), ["upper.store c original disk", "lower.store c original disk"],
                       "both stores began before either ended: \(calls)")
        XCTAssertEqual(Set(calls.suffix(2)), ["upper.stored c", "lower.stored c"])
    }

    func testRemoveAndClearReachTheCachesOfTheirPolicies() async throws {
        let c = caches("upper", "lower")
        let value = ImageCacheValue.original(Data([7]))
        for cache in c {
            for key in ["a", "b"] { try await cache.store(value, forKey: key, to: .all, metadata: DiskCacheMetadata()) }
        }

        try await ImageCachesManager(caches: c, removePolicy: .highestOnly).remove(forKey: "a", from: .all)
        XCTAssertEqual(c.map { $0.stored("a", in: .disk) != nil }, [false, true])
        try await ImageCachesManager(caches: c).remove(forKey: "a", from: .disk)
        XCTAssertEqual(c.map { $0.stored("a", in: .disk) != nil }, [false, false], "concurrent by default: both")
        XCTAssertNotNil(c[1].stored("a", in: .memory), "only the tiers asked")

        try await ImageCachesManager(caches: c, clearPolicy: .lowestOnly).clear(.memory)
        XCTAssertEqual(c.map { $0.count(.memory) }, [1, 0], "the upper cache keeps \"b\" in memory")
        try await ImageCachesManager(caches: c).clear(.all)
        XCTAssertEqual(c.map { $0.count(.memory) + $0.count(.disk) }, [0, 0], "concurrent by default: both")
    }

    func testContainsFollowsItsPolicy() async throws {
        let c = caches("upper", "lower")
        try await c[1].store(.original(Data([1])), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        log.reset()

        var yes = await ImageCachesManager(caches: c).contains("k", kind: .original, in: .all)
        XCTAssertTrue(yes)
        XCTAssertEqual(log.all, ["upper.contains k original all", "lower.contains k original all"])
        yes = await ImageCachesManager(caches: c).contains("k", kind: .variant, in: .all)
        XCTAssertFalse(yes, "another kind")
        yes = await ImageCachesManager(caches: c, containsPolicy: .highestOnly).contains("k", kind: .original, in: .all)
        XCTAssertFalse(yes)

        try await c[0].store(.original(Data([1])), forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        log.reset()
        yes = await ImageCachesManager(caches: c).contains("k", kind: .original, in: .disk)
        XCTAssertTrue(yes)
        XCTAssertEqual(log.all, ["upper.contains k original disk"], "serial: stops at the first yes")

        c[0].holdQueries(true)
        let start = ContinuousClock.now
        yes = await ImageCachesManager(caches: c, containsPolicy: .concurrent).contains("k", kind: .original, in: .disk)
        XCTAssertTrue(yes)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "answered at the lower cache's yes")
    }

    func testAFailingCacheIsAMissAndItsErrorSurfacesOnlyWhenNoCacheHasTheEntry() async throws {
        let c = caches("upper", "lower")
        c[0].fail(true)
        let value = ImageCacheValue.original(Data([5]))
        try await c[1].store(value, forKey: "k", to: .disk, metadata: DiskCacheMetadata())
        let m = ImageCachesManager(caches: c, storePolicy: .serial, promotesHits: false)

        let hit = try await m.entry(forKey: "k", kind: .original, from: .all)
        XCTAssertEqual(hit?.value.original, Data([5]))
        do {
            _ = try await m.entry(forKey: "missing", kind: .original, from: .all)
            XCTFail("no cache had it and one failed")
        } catch let failure as InMemoryImageCache.Failure {
            XCTAssertEqual(failure, InMemoryImageCache.Failure(cache: "upper"))
        }

        do {
            try await m.store(value, forKey: "s", to: .disk, metadata: DiskCacheMetadata())
            XCTFail("the upper cache's store failed")
        } catch let failure as InMemoryImageCache.Failure {
            XCTAssertEqual(failure.cache, "upper")
        }
        XCTAssertNotNil(c[1].stored("s", in: .disk), "the failure did not stop the lower cache's store")

        c[1].fail(true)
        let missing = try? await m.entry(forKey: "k", kind: .original, from: .all)
        XCTAssertNil(missing, "every cache failed: a miss to try?")
    }

    func testTheSynchronousMemoryQueryAsksTheCachesOfTheQueryPolicyInOrder() async throws {
        let c = caches("upper", "lower", synchronousMemory: true)
        let lowerImage = image(2)
        try await c[1].store(.image(lowerImage), forKey: "k", to: .memory, metadata: DiskCacheMetadata())
        log.reset()

        let m = ImageCachesManager(caches: c)
        XCTAssertTrue(m.answersMemoryQueriesSynchronously)
        XCTAssertTrue(m.memoryValue(forKey: "k", kind: .image)?.image === lowerImage)
        XCTAssertEqual(log.all, ["upper.memoryValue k", "lower.memoryValue k"])
        XCTAssertNil(m.memoryValue(forKey: "k", kind: .variant))
        XCTAssertNil(ImageCachesManager(caches: c, queryPolicy: .highestOnly).memoryValue(forKey: "k", kind: .image))

        let mixed = ImageCachesManager(caches: [c[0], InMemoryImageCache("async", log: log)])
        XCTAssertFalse(mixed.answersMemoryQueriesSynchronously, "one cache answers its memory tier only asynchronously")
        XCTAssertTrue(ImageCachesManager(caches: [c[0], InMemoryImageCache("async", log: log)],
                                         queryPolicy: .highestOnly).answersMemoryQueriesSynchronously)
    }

    func testMetadataComesFromTheFirstCacheThatHasIt() async throws {
        let c = caches("upper", "lower")
        try await c[1].store(.original(Data([1])), forKey: "k", to: .disk,
                             metadata: DiskCacheMetadata(etag: "\"lower\""))
        let m = ImageCachesManager(caches: c)
        let lower = await m.metadata(forKey: "k", kind: .original, from: .all)
        XCTAssertEqual(lower?.etag, "\"lower\"")
        try await c[0].store(.original(Data([1])), forKey: "k", to: .disk,
                             metadata: DiskCacheMetadata(etag: "\"upper\""))
        let upper = await m.metadata(forKey: "k", kind: .original, from: .all)
        XCTAssertEqual(upper?.etag, "\"upper\"")
    }
}
