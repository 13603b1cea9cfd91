import Foundation
import ImageKit
import XCTest

/// ``ByteTierImageCache`` over a tier of bytes in a dictionary: what it keeps, with which
/// metadata, under which key, and what it refuses to read back.
final class ByteTierImageCacheTests: XCTestCase {
    private func encoded() async throws -> EncodedImage {
        try await ImageEncoder.encodedImage(TestPixels.image(width: 12, height: 9), as: .png())
    }

    func testVariantsAndOriginalsRoundTripWithTheirMetadata() async throws {
        let tier = InMemoryByteTier()
        let cache = ByteTierImageCache(tier: tier, keyPrefix: "thumbs:")
        let variant = try await encoded()
        let expires = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3600).rounded())
        let metadata = DiskCacheMetadata(etag: "\"abc\"", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT",
                                         expires: expires, userData: Data([0, 1, 255]))

        try await cache.store(.variant(variant), forKey: "v", to: .all, metadata: metadata)
        try await cache.store(.original(Data("bytes".utf8)), forKey: "o", to: .disk, metadata: DiskCacheMetadata())
        XCTAssertEqual(tier.keys, ["thumbs:o", "thumbs:v"], "under the prefix")
        XCTAssertEqual(tier.expiry("thumbs:v"), expires, "the tier is told when the entry expires")
        XCTAssertNil(tier.expiry("thumbs:o"))

        let v = try await cache.entry(forKey: "v", kind: .variant, from: .all)
        XCTAssertEqual(v?.value.variant, variant)
        XCTAssertEqual(v?.value.variant?.format, .png)
        XCTAssertEqual(v?.metadata, metadata)
        XCTAssertEqual(v?.tier, .disk)
        let o = try await cache.entry(forKey: "o", kind: .original, from: .disk)
        XCTAssertEqual(o?.value.original, Data("bytes".utf8))
        XCTAssertEqual(o?.value.original?.startIndex, 0)
        XCTAssertEqual(o?.metadata, DiskCacheMetadata())

        let wrongKind = try await cache.entry(forKey: "o", kind: .variant, from: .all)
        XCTAssertNil(wrongKind, "original bytes are no variant")
        let noImage = await cache.contains("v", kind: .image, in: .all)
        XCTAssertFalse(noImage)
        let hasVariant = await cache.contains("v", kind: .variant, in: .all)
        XCTAssertTrue(hasVariant)
    }

    func testDecodedImagesAreNotKept() async throws {
        let tier = InMemoryByteTier()
        let cache = ByteTierImageCache(tier: tier)
        try await cache.store(.image(TestPixels.image(width: 4, height: 4)), forKey: "i", to: .all,
                              metadata: DiskCacheMetadata())
        XCTAssertEqual(tier.keys, [])
        let hit = try await cache.entry(forKey: "i", kind: .image, from: .all)
        XCTAssertNil(hit)
    }

    func testItWorksOnlyForItsOwnTier() async throws {
        let tier = InMemoryByteTier()
        let disk = ByteTierImageCache(tier: tier)
        XCTAssertEqual(disk.tierType, .disk)
        XCTAssertTrue(disk.answersMemoryQueriesSynchronously, "no memory tier to answer for")
        try await disk.store(.original(Data([1])), forKey: "m", to: .memory, metadata: DiskCacheMetadata())
        XCTAssertEqual(tier.keys, [], "a memory store is not for a disk tier")
        try await disk.store(.original(Data([1])), forKey: "d", to: .disk, metadata: DiskCacheMetadata())
        var hit = try await disk.entry(forKey: "d", kind: .original, from: .memory)
        XCTAssertNil(hit)

        let memory = ByteTierImageCache(tier: tier, countsAsMemory: true)
        XCTAssertEqual(memory.tierType, .memory)
        XCTAssertFalse(memory.answersMemoryQueriesSynchronously)
        hit = try await memory.entry(forKey: "d", kind: .original, from: .memory)
        XCTAssertEqual(hit?.tier, .memory)
        hit = try await memory.entry(forKey: "d", kind: .original, from: .disk)
        XCTAssertNil(hit)
    }

    func testExpiredDamagedAndForeignEntriesAreMisses() async throws {
        let tier = InMemoryByteTier()
        let cache = ByteTierImageCache(tier: tier)
        let past = DiskCacheMetadata(etag: "\"old\"", expires: Date(timeIntervalSinceNow: -5))
        try await cache.store(.original(Data([1, 2, 3])), forKey: "old", to: .all, metadata: past)
        let expired = try await cache.entry(forKey: "old", kind: .original, from: .all)
        XCTAssertNil(expired)
        let metadata = await cache.metadata(forKey: "old", kind: .original, from: .all)
        XCTAssertEqual(metadata?.etag, "\"old\"", "metadata is read expired or not")

        try await cache.store(.original(Data([1, 2, 3])), forKey: "cut", to: .all, metadata: past)
        let whole = try XCTUnwrap(tier.raw("cut"))
        for length in [0, 3, whole.count - 1] {
            tier.setRaw(whole.prefix(length), forKey: "cut")
            let hit = try await cache.entry(forKey: "cut", kind: .original, from: .all)
            XCTAssertNil(hit, "truncated to \(length) bytes")
        }
        var flipped = whole
        flipped[flipped.count - 10] ^= 0xFF  // the metadata length's low byte
        tier.setRaw(flipped, forKey: "cut")
        let damaged = try await cache.entry(forKey: "cut", kind: .original, from: .all)
        XCTAssertNil(damaged)

        var payloadFlipped = whole
        payloadFlipped[payloadFlipped.startIndex + 1] ^= 0x01
        tier.setRaw(payloadFlipped, forKey: "cut")
        let flippedPayload = try await cache.entry(forKey: "cut", kind: .original, from: .all)
        XCTAssertNil(flippedPayload, "one payload bit changed: the checksum no longer matches")

        tier.setRaw(Data("written by someone else".utf8), forKey: "foreign")
        let foreign = try await cache.entry(forKey: "foreign", kind: .original, from: .all)
        XCTAssertNil(foreign)

        let junk = EncodedImage(data: Data("not an image".utf8), format: .png, pixelSize: PixelSize(width: 1, height: 1))
        try await cache.store(.variant(junk), forKey: "junk", to: .all, metadata: DiskCacheMetadata())
        let stored = await cache.contains("junk", kind: .variant, in: .all)
        XCTAssertTrue(stored)
        let unreadable = try await cache.entry(forKey: "junk", kind: .variant, from: .all)
        XCTAssertNil(unreadable, "a variant whose bytes are no image is a miss")
    }

    func testRemoveAndClear() async throws {
        let tier = InMemoryByteTier()
        let cache = ByteTierImageCache(tier: tier, keyPrefix: "p:")
        for key in ["a", "b"] {
            try await cache.store(.original(Data([1])), forKey: key, to: .all, metadata: DiskCacheMetadata())
        }
        try await cache.remove(forKey: "a", from: .memory)
        XCTAssertEqual(tier.keys, ["p:a", "p:b"], "not its tier")
        try await cache.remove(forKey: "a", from: .all)
        XCTAssertEqual(tier.keys, ["p:b"])
        try await cache.clear(.disk)
        XCTAssertEqual(tier.keys, [])
    }
}
