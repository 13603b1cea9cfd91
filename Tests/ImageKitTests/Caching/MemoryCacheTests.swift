import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

final class MemoryCacheTests: XCTestCase {
    /// 16x16 pixels: 64-byte rows, 1024 bytes of pixels.
    private let image = TestPixels.image(width: 16, height: 16)

    func testCostIsBytesPerRowTimesHeightTimesFrames() {
        XCTAssertEqual(image.cost, 64 * 16)
        XCTAssertEqual(TestPixels.image(width: 17, height: 3).cost, 128 * 3)
    }

    func testEvictsExactlyTheLeastRecentlyUsedAcrossShards() {
        // A reference LRU list checked against the cache after every step of a random workload.
        var rng = SplitMix(seed: 7)
        let limit = 20
        let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: limit * image.cost, shardCount: 8))
        var model: [String] = []  // least recently used first
        for step in 0..<4000 {
            let key = "k\(rng.next() % 60)"
            if rng.next() % 3 == 0 {
                let hit = cache.image(forKey: key) != nil
                XCTAssertEqual(hit, model.contains(key), "step \(step): lookup of \(key)")
                if let i = model.firstIndex(of: key) { model.append(model.remove(at: i)) }
            } else {
                cache.set(image, forKey: key)
                model.removeAll { $0 == key }
                model.append(key)
                if model.count > limit { model.removeFirst(model.count - limit) }
            }
            XCTAssertEqual(cache.totalCount, model.count, "step \(step)")
        }
        for key in (0..<60).map({ "k\($0)" }) {
            XCTAssertEqual(cache.contains(key), model.contains(key), key)
        }
    }

    func testCountLimitAndTrim() {
        let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 1 << 30, countLimit: 3))
        for i in 0..<5 { cache.set(image, forKey: "\(i)") }
        XCTAssertEqual(cache.totalCount, 3)
        XCTAssertFalse(cache.contains("0"))
        XCTAssertFalse(cache.contains("1"))
        _ = cache.image(forKey: "2")  // now the most recently used
        cache.trim(toCount: 1)
        XCTAssertTrue(cache.contains("2"))
        XCTAssertEqual(cache.totalCount, 1)
        for i in 0..<3 { cache.set(image, forKey: "x\(i)") }
        cache.trim(toCost: image.cost * 2)
        XCTAssertEqual(cache.totalCost, image.cost * 2)
        XCTAssertEqual(cache.statistics.evictions, 2 + 2 + 2)
    }

    func testReplacingAnEntryUpdatesItsCost() {
        let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 1 << 30))
        cache.set(image, forKey: "a")
        let big = TestPixels.image(width: 64, height: 64)
        cache.set(big, forKey: "a")
        XCTAssertEqual(cache.totalCost, big.cost)
        XCTAssertEqual(cache.totalCount, 1)
        XCTAssertTrue(cache.image(forKey: "a") === big)
    }

    func testImageLargerThanTheCostLimitIsNotStored() {
        let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: image.cost * 2))
        cache.set(image, forKey: "small")
        cache.set(image, forKey: "a")
        cache.set(TestPixels.image(width: 64, height: 64), forKey: "a")
        XCTAssertFalse(cache.contains("a"), "the older image for the key goes too")
        XCTAssertTrue(cache.contains("small"), "nothing else is evicted for it")
    }

    func testTimeToLivePerCacheAndPerEntry() {
        let expiring = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 1 << 20, ttl: .zero))
        expiring.set(image, forKey: "a")
        expiring.set(image, forKey: "b", ttl: .seconds(3600))
        XCTAssertFalse(expiring.contains("a"))
        XCTAssertNil(expiring.image(forKey: "a"))
        XCTAssertNotNil(expiring.image(forKey: "b"))

        let lasting = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 1 << 20, ttl: .seconds(3600)))
        lasting.set(image, forKey: "a")
        lasting.set(image, forKey: "b", ttl: .zero)
        lasting.set(image, forKey: "c", ttl: .zero)
        XCTAssertNotNil(lasting.image(forKey: "a"))
        XCTAssertNil(lasting.image(forKey: "b"))
        XCTAssertEqual(lasting.totalCount, 2, "an expired entry found by a lookup is removed")
        lasting.removeExpired()
        XCTAssertEqual(lasting.totalCount, 1)
        XCTAssertEqual(lasting.statistics.expirations, 2)
    }

    func testRemoveRemoveAllAndStatistics() {
        let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 1 << 20))
        cache.set(image, forKey: "a")
        cache.set(image, forKey: "b")
        XCTAssertNotNil(cache.image(forKey: "a"))
        XCTAssertNil(cache.image(forKey: "zzz"))
        XCTAssertTrue(cache.remove(forKey: "a") === image)
        XCTAssertNil(cache.remove(forKey: "a"))
        var stats = cache.statistics
        XCTAssertEqual(stats, MemoryCacheStatistics(hits: 1, misses: 1, totalCost: image.cost, totalCount: 1))
        cache.removeAll()
        stats = cache.statistics
        XCTAssertEqual(stats.totalCost, 0)
        XCTAssertEqual(stats.totalCount, 0)
        XCTAssertFalse(cache.contains("b"))
        cache.set(image, forKey: "c")  // slots are reused after removeAll
        XCTAssertTrue(cache.image(forKey: "c") === image)
    }

    func testDefaultCostLimitComesFromMemoryAndCgroupLimits() throws {
        let physical = MemoryCacheConfiguration.availableMemory(cgroupRoot: "/nonexistent")
        XCTAssertGreaterThan(physical, 0)
        XCTAssertLessThanOrEqual(MemoryCacheConfiguration.availableMemory(), physical)
        XCTAssertEqual(MemoryCacheConfiguration.defaultCostLimit, MemoryCacheConfiguration.availableMemory() / 100 * 15)
        XCTAssertEqual(MemoryCacheConfiguration().costLimit, MemoryCacheConfiguration.defaultCostLimit)

        let v2 = TemporaryDirectory()
        try "1073741824\n".write(toFile: v2.path + "/memory.max", atomically: true, encoding: .utf8)
        XCTAssertEqual(MemoryCacheConfiguration.availableMemory(cgroupRoot: v2.path), min(physical, 1 << 30))
        try "max\n".write(toFile: v2.path + "/memory.max", atomically: true, encoding: .utf8)
        XCTAssertEqual(MemoryCacheConfiguration.availableMemory(cgroupRoot: v2.path), physical)

        let v1 = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: v1.path + "/memory", withIntermediateDirectories: true)
        try "536870912\n".write(toFile: v1.path + "/memory/memory.limit_in_bytes", atomically: true, encoding: .utf8)
        XCTAssertEqual(MemoryCacheConfiguration.availableMemory(cgroupRoot: v1.path), min(physical, 1 << 29))
        try "9223372036854771712\n".write(toFile: v1.path + "/memory/memory.limit_in_bytes", atomically: true,
                                          encoding: .utf8)
        XCTAssertEqual(MemoryCacheConfiguration.availableMemory(cgroupRoot: v1.path), physical, "v1's 'unlimited'")
    }

    func testConcurrentUseKeepsTotalsConsistent() async {
        let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 50 * image.cost))
        let image = self.image
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var rng = SplitMix(seed: UInt64(t + 1))
                    for _ in 0..<10_000 {
                        let key = "k\(rng.next() % 100)"
                        switch rng.next() % 10 {
                        case 0..<5: _ = cache.image(forKey: key)
                        case 5..<8: cache.set(image, forKey: key)
                        case 8: cache.remove(forKey: key)
                        default: cache.trim(toCount: 40)
                        }
                    }
                }
            }
        }
        let present = (0..<100).filter { cache.contains("k\($0)") }.count
        XCTAssertEqual(cache.totalCount, present)
        XCTAssertEqual(cache.totalCost, present * image.cost)
        XCTAssertLessThanOrEqual(cache.totalCost, 50 * image.cost)
    }
}
