import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// 8 tasks × 10 000 mixed operations on both tiers at once (run under TSan by
/// `make sanitize`); afterwards every image found is one that was stored for
/// its key, and the disk index matches the directory.
final class CacheConcurrencyTests: XCTestCase {
    /// An 8x8 image whose pixels name its key and version.
    private static func image(key: Int, version: Int) -> Image {
        var pixels = [UInt8](repeating: 255, count: 8 * 8 * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            pixels[i] = UInt8(key)
            pixels[i + 1] = UInt8(truncatingIfNeeded: version)
            pixels[i + 2] = UInt8(truncatingIfNeeded: version >> 8)
        }
        // The pixels are valid by construction.
        return try! Image(width: 8, height: 8, premultipliedRGBA: pixels)
    }

    /// Whether `image` is one `image(key:version:)` made for `key`.
    private static func isValid(_ image: Image, key: Int) -> Bool {
        let pixels = image.packedPixels()
        guard image.width == 8, image.height == 8, pixels[0] == UInt8(key) else { return false }
        return stride(from: 0, to: pixels.count, by: 4).allSatisfy {
            pixels[$0] == pixels[0] && pixels[$0 + 1] == pixels[1] && pixels[$0 + 2] == pixels[2] && pixels[$0 + 3] == 255
        }
    }

    func testMixedOperationsOnBothTiers() async throws {
        let dir = TemporaryDirectory()
        let cache = try ImageCache(namespace: "concurrency", directory: dir.url,
                                   memory: MemoryCacheConfiguration(costLimit: 40 * 512),
                                   disk: DiskCacheConfiguration(maxSize: 48 * 1024, sweepInterval: nil, ioThreads: 3))
        let bad = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var rng = SplitMix(seed: UInt64(task) + 100)
                    var bad = 0
                    for step in 0..<10_000 {
                        let key = Int(rng.next() % 64)
                        let name = "k\(key)"
                        switch rng.next() % 20 {
                        case 0..<9:
                            if let image = try await cache.image(forKey: name)?.image, !Self.isValid(image, key: key) {
                                bad += 1
                            }
                        case 9..<12:
                            try await cache.store(Self.image(key: key, version: task * 10_000 + step), forKey: name)
                        case 12..<15:
                            try await cache.store(Self.image(key: key, version: step), forKey: name, to: .memory)
                        case 15:
                            try await cache.remove(forKey: name)
                        case 16:
                            try await cache.remove(forKey: name, from: .memory)
                        case 17:
                            _ = await cache.contains(name)
                        case 18:
                            if let image = try await cache.image(forKey: name, from: .disk)?.image,
                               !Self.isValid(image, key: key) {
                                bad += 1
                            }
                        default:
                            cache.memoryCache.trim(toCount: 20)
                        }
                    }
                    return bad
                }
            }
            return try await group.reduce(0, +)
        }
        XCTAssertEqual(bad, 0, "images found under the wrong key or damaged")

        await cache.diskCache.sweep()
        let files = dir.files().isEmpty ? [] : try FileManager.default.contentsOfDirectory(atPath: dir.path + "/concurrency")
        let entries = files.filter { $0.hasSuffix(".ikc") }
        let count = await cache.totalDiskCount
        XCTAssertEqual(count, entries.count)
        let size = await cache.totalDiskSize
        let onDisk = entries.reduce(0) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: dir.path + "/concurrency/" + name)[.size] as? Int) ?? 0)
        }
        XCTAssertEqual(size, onDisk)
        XCTAssertLessThanOrEqual(size, 48 * 1024)
        let stats = await cache.diskCache.statistics
        XCTAssertEqual(stats.corruptEntriesRemoved, 0)
        XCTAssertEqual(stats.writeErrors, 0)
        let memory = cache.memoryCache
        XCTAssertEqual(memory.totalCount, (0..<64).filter { memory.contains("k\($0)") }.count)
    }
}
