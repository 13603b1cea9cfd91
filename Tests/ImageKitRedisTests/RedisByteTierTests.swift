import Foundation
import ImageKit
@testable import ImageKitRedis
import TestServers
import XCTest

/// The tier against a real redis-server: what it stores and how, and what reads as a miss.
final class RedisByteTierTests: RedisTestCase {
    private func png(_ seed: Int, side: Int = 16) async throws -> EncodedImage {
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) { pixels[i] = UInt8((i / 4 * 7 + seed * 31) & 0xFF) }
        return try await ImageEncoder.encodedImage(try Image(width: side, height: side, premultipliedRGBA: pixels), as: .png())
    }

    func testVariantsAndOriginalsRoundTripWithTheirMetadata() async throws {
        let server = try startRedis()
        let tier = try RedisByteTier(configuration: configuration([server]))
        let cache = ByteTierImageCache(tier: tier)
        let variant = try await png(1)
        let metadata = DiskCacheMetadata(etag: "\"v1\"", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT",
                                         expires: Date(timeIntervalSinceNow: 60))
        try await cache.store(.variant(variant), forKey: "v", to: .all, metadata: metadata)
        try await cache.store(.original(Data([9, 8, 7])), forKey: "o", to: .all, metadata: DiskCacheMetadata())

        let hit = try await cache.entry(forKey: "v", kind: .variant, from: .all)
        XCTAssertEqual(hit?.value.variant, variant)
        XCTAssertEqual(hit?.metadata.etag, "\"v1\"")
        XCTAssertEqual(hit?.metadata.lastModified, "Tue, 24 Nov 2026 10:00:00 GMT")
        let original = try await cache.entry(forKey: "o", kind: .original, from: .all)
        XCTAssertEqual(original?.value.original, Data([9, 8, 7]))
        let wrongKind = try await cache.entry(forKey: "o", kind: .variant, from: .all)
        XCTAssertNil(wrongKind)
        let absent = try await cache.entry(forKey: "nothing", kind: .variant, from: .all)
        XCTAssertNil(absent)

        XCTAssertEqual(try raw(server, "EXISTS", tier.redisKey(for: "v")), .integer(1), "stored under the hashed key")
        let stats = tier.statistics
        XCTAssertEqual(stats.stores, 2)
        XCTAssertEqual(stats.hits, 3)
        XCTAssertEqual(stats.misses, 1)
        XCTAssertEqual(stats.failures, 0)

        let contained = await cache.contains("v", kind: .variant, in: .all)
        XCTAssertTrue(contained)
        try await cache.remove(forKey: "v", from: .all)
        let removed = await tier.containsData(forKey: "v")
        XCTAssertFalse(removed)
    }

    func testEntriesExpireWithTheirMetadataOrTheDefault() async throws {
        let server = try startRedis()
        var settings = configuration([server])
        settings.defaultTimeToLive = .seconds(3600)
        let tier = try RedisByteTier(configuration: settings)
        await tier.setData(Data([1]), forKey: "soon", expires: Date(timeIntervalSinceNow: 60))
        await tier.setData(Data([2]), forKey: "default", expires: nil)
        await tier.setData(Data([3]), forKey: "past", expires: Date(timeIntervalSinceNow: -1))
        guard case .integer(let soon) = try raw(server, "PTTL", tier.redisKey(for: "soon")),
              case .integer(let fallback) = try raw(server, "PTTL", tier.redisKey(for: "default"))
        else { return XCTFail("PTTL did not answer with integers") }
        XCTAssertTrue((55_000...60_001).contains(soon), "PX from the entry's expiry, not \(soon)")
        XCTAssertTrue((3_595_000...3_600_000).contains(fallback), "the default time to live, not \(fallback)")
        XCTAssertEqual(try raw(server, "EXISTS", tier.redisKey(for: "past")), .integer(0), "already expired: not stored")

        settings.defaultTimeToLive = nil
        let forever = try RedisByteTier(configuration: settings)
        await forever.setData(Data([4]), forKey: "kept", expires: nil)
        XCTAssertEqual(try raw(server, "PTTL", forever.redisKey(for: "kept")), .integer(-1))
    }

    func testValuesOverTheMaximumAreNeitherStoredNorRead() async throws {
        let server = try startRedis()
        var settings = configuration([server])
        settings.maxValueBytes = 1000
        let tier = try RedisByteTier(configuration: settings)
        await tier.setData(Data(repeating: 1, count: 1001), forKey: "big", expires: nil)
        XCTAssertEqual(try raw(server, "EXISTS", tier.redisKey(for: "big")), .integer(0))
        XCTAssertEqual(tier.statistics.oversized, 1)
        await tier.setData(Data(repeating: 1, count: 1000), forKey: "fits", expires: nil)
        let fits = await tier.data(forKey: "fits")
        XCTAssertEqual(fits?.count, 1000)

        // Written by something else, 5 MB: read as a miss, and no more than 1001 bytes cross.
        _ = try raw(server, [Data("SET".utf8), Data(tier.redisKey(for: "foreign").utf8), Data(repeating: 7, count: 5 << 20)])
        let foreign = await tier.data(forKey: "foreign")
        XCTAssertNil(foreign)
    }

    func testTornCorruptedAndForeignValuesAreMisses() async throws {
        let server = try startRedis()
        let tier = try RedisByteTier(configuration: configuration([server]))
        let cache = ByteTierImageCache(tier: tier)
        let variant = try await png(2, side: 32)
        try await cache.store(.variant(variant), forKey: "v", to: .all, metadata: DiskCacheMetadata())
        let name = Data(tier.redisKey(for: "v").utf8)
        guard case .string(let whole) = try raw(server, [Data("GET".utf8), name]) else { return XCTFail("not stored") }
        let good = try await cache.entry(forKey: "v", kind: .variant, from: .all)
        XCTAssertEqual(good?.value.variant, variant)

        var damaged: [(String, Data)] = [("torn", whole.prefix(whole.count / 2)), ("empty", Data()),
                                         ("foreign", Data("{\"json\": \"from another app\"}".utf8))]
        for offset in [0, whole.count / 3, whole.count - 20] {
            var flipped = whole
            flipped[flipped.startIndex + offset] ^= 0x40
            damaged.append(("bit flipped at \(offset)", flipped))
        }
        for (what, bytes) in damaged {
            _ = try raw(server, [Data("SET".utf8), name, bytes])
            let hit = try await cache.entry(forKey: "v", kind: .variant, from: .all)
            XCTAssertNil(hit, what)
        }
        // Not a string at all.
        _ = try raw(server, "DEL", tier.redisKey(for: "v"))
        _ = try raw(server, "LPUSH", tier.redisKey(for: "v"), "x")
        let wrongType = try await cache.entry(forKey: "v", kind: .variant, from: .all)
        XCTAssertNil(wrongType)
    }

    func testAFullRedisUnderNoevictionFailsStoresSoftly() async throws {
        let server = try startRedis(arguments: ["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"])
        let tier = try RedisByteTier(configuration: configuration([server]))
        let value = Data(repeating: 0x5A, count: 200_000)
        for i in 0..<40 { await tier.setData(value, forKey: "fill-\(i)", expires: nil) }
        let stats = tier.statistics
        XCTAssertGreaterThan(stats.stores, 0)
        XCTAssertLessThan(stats.stores, 40, "3 MB cannot hold 8 MB")
        XCTAssertEqual(stats.stores + stats.failures, 40, "each refused store is counted, none thrown")
        XCTAssertEqual(stats.circuitOpenings, 0, "an OOM reply is the node working, not failing")
        let first = await tier.data(forKey: "fill-0")
        XCTAssertEqual(first, value, "what was stored stays readable")
    }

    func testPasswordAndACLUser() async throws {
        let server = try startRedis(arguments: ["--requirepass", "s3cret"])
        var settings = configuration([server])
        let anonymous = try RedisByteTier(configuration: settings)
        await anonymous.setData(Data([1]), forKey: "k", expires: nil)
        XCTAssertEqual(anonymous.statistics.stores, 0)
        XCTAssertEqual(anonymous.statistics.failures, 1, "NOAUTH is a soft failure")

        settings.password = "s3cret"
        let withPassword = try RedisByteTier(configuration: settings)
        await withPassword.setData(Data([1]), forKey: "k", expires: nil)
        let found = await withPassword.data(forKey: "k")
        XCTAssertEqual(found, Data([1]))

        settings.username = "default"
        let withUser = try RedisByteTier(configuration: settings)
        let alsoFound = await withUser.data(forKey: "k")
        XCTAssertEqual(alsoFound, Data([1]), "AUTH default s3cret (an ACL user and its password)")

        settings.password = "wrong"
        let wrong = try RedisByteTier(configuration: settings)
        let refused = await wrong.data(forKey: "k")
        XCTAssertNil(refused)
        XCTAssertEqual(wrong.statistics.failures, 1)
    }

    func testTheConnectionIsReused() async throws {
        let server = try startRedis()
        let tier = try RedisByteTier(configuration: configuration([server]))
        let before = try connectionsReceived(server)
        for i in 0..<50 { await tier.setData(Data([UInt8(i)]), forKey: "k\(i)", expires: nil) }
        for i in 0..<50 { _ = await tier.data(forKey: "k\(i)") }
        XCTAssertEqual(try connectionsReceived(server) - before, 2,
                       "100 sequential commands on one connection (and one for this INFO)")
        XCTAssertEqual(tier.statistics.hits, 50)
    }

    func testRemoveAllDataRemovesOnlyItsNamespace() async throws {
        let server = try startRedis()
        let tier = try RedisByteTier(configuration: configuration([server], namespace: "mine*:"))
        for i in 0..<1200 { await tier.setData(Data([1]), forKey: "k\(i)", expires: nil) }
        _ = try raw(server, "SET", "other:keep", "1")
        _ = try raw(server, "SET", "mine-not:keep", "1")
        try await tier.removeAllData()
        XCTAssertEqual(try raw(server, "DBSIZE"), .integer(2))
    }
}
