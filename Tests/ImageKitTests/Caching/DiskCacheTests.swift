import CImageCore
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

final class DiskCacheTests: XCTestCase {
    private func open(_ dir: TemporaryDirectory, maxSize: Int = 1 << 30, maxAge: Duration? = .seconds(7 * 24 * 3600),
                      trimRatio: Double = 0.8) throws -> DiskCache {
        try DiskCache(directory: dir.url, configuration: DiskCacheConfiguration(
            maxSize: maxSize, maxAge: maxAge, trimRatio: trimRatio, sweepInterval: nil))
    }

    private func entryFiles(_ dir: TemporaryDirectory) -> [String] {
        dir.files().filter { $0.hasSuffix(".ikc") }
    }

    private func diskSize(_ dir: TemporaryDirectory) -> Int {
        entryFiles(dir).reduce(0) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: dir.path + "/" + name)[.size] as? Int) ?? 0)
        }
    }

    func testImagesAndMetadataRoundTrip() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let image = TestPixels.image(width: 123, height: 45, opaque: false)
        let expires = Date(timeIntervalSinceNow: 3600)
        let metadata = DiskCacheMetadata(etag: "W/\"v1\"", lastModified: "Tue, 15 Nov 1994 12:45:26 GMT",
                                         expires: expires, userData: Data([1, 2, 3]))
        try await cache.store(image, forKey: "https://example.com/a.png", metadata: metadata)
        let entry = try await cache.entry(forKey: "https://example.com/a.png")
        let read = try XCTUnwrap(entry)
        XCTAssertEqual(read.value.width, 123)
        XCTAssertEqual(read.value.height, 45)
        XCTAssertFalse(read.value.isOpaque)
        XCTAssertEqual(read.value.packedPixels(), image.packedPixels())
        XCTAssertEqual(read.metadata.etag, "W/\"v1\"")
        XCTAssertEqual(read.metadata.lastModified, "Tue, 15 Nov 1994 12:45:26 GMT")
        XCTAssertEqual(read.metadata.userData, Data([1, 2, 3]))
        XCTAssertEqual(read.metadata.expires?.timeIntervalSince1970 ?? 0, expires.timeIntervalSince1970, accuracy: 0.002)
        XCTAssertFalse(read.isExpired)
        XCTAssertEqual(read.created.timeIntervalSinceNow, 0, accuracy: 60)
        XCTAssertEqual(read.storedSize, diskSize(dir))
        let missing = try await cache.image(forKey: "https://example.com/b.png")
        XCTAssertNil(missing)
        let stats = await cache.statistics
        XCTAssertEqual(stats.hits, 1)
        XCTAssertEqual(stats.misses, 1)
        XCTAssertEqual(stats.totalCount, 1)
        XCTAssertEqual(stats.totalSize, diskSize(dir))
    }

    /// Bytes `image` takes on disk with `compression`, after checking it reads back exactly.
    private func storedSize(_ image: Image, _ compression: DiskCacheCompression) async throws -> Int {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.url, configuration: DiskCacheConfiguration(
            sweepInterval: nil, compression: compression))
        try await cache.store(image, forKey: "k")
        let entry = try await cache.entry(forKey: "k")
        XCTAssertEqual(entry?.value.packedPixels(), image.packedPixels(), "\(compression)")
        return entry?.storedSize ?? 0
    }

    func testCompressionPresetsTradeSizeForSpeed() async throws {
        // Smooth gradients: the row-difference filter finds more to remove.
        let smooth = TestPixels.image(width: 300, height: 200, seed: 2)
        let smallest = try await storedSize(smooth, .smallest)
        let balanced = try await storedSize(smooth, .balanced)
        XCTAssertLessThan(smallest, balanced)

        // Rows 40 % repeating pattern, 60 % noise: LZ4 saves between an eighth and a half,
        // which balanced keeps for small bitmaps and fastest does not.
        let mixedBalanced = try await storedSize(mixedImage(width: 300, height: 200), .balanced)
        let mixedFastest = try await storedSize(mixedImage(width: 300, height: 200), .fastest)
        XCTAssertLessThan(mixedBalanced, mixedFastest)
        XCTAssertLessThanOrEqual(mixedFastest, 300 * 200 * 3 + 1000, "opaque pixels are stored as RGB at most")

        // From 4 MiB of pixels up, balanced stores like fastest.
        let large = mixedImage(width: 1100, height: 1000)
        let largeBalanced = try await storedSize(large, .balanced)
        let largeFastest = try await storedSize(large, .fastest)
        XCTAssertEqual(largeBalanced, largeFastest)
    }

    /// Opaque rows whose first 40 % repeat a short pattern and the rest is noise.
    private func mixedImage(width: Int, height: Int) -> Image {
        var rng = SplitMix(seed: 5)
        let pattern = (0..<32).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let v = x < width * 2 / 5 ? pattern[(x * 4) % 32] : UInt8(truncatingIfNeeded: rng.next())
                let i = (y * width + x) * 4
                pixels[i] = v
                pixels[i + 1] = v &+ 1
                pixels[i + 2] = v &+ 2
            }
        }
        // The pixels are valid by construction.
        return try! Image(width: width, height: height, premultipliedRGBA: pixels)
    }

    func testLargeEntriesReadBackIdenticallyWhateverTheDecodeThreads() async throws {
        // 4.4 MB of pixels: read in parts. Eight reads at once on three I/O threads keep the
        // cache's part threads busy, so reads also run parts no helper took.
        let image = TestPixels.image(width: 1100, height: 1000, opaque: false)
        for decodeThreads in [1, 2, 4] {
            let dir = TemporaryDirectory()
            let cache = try DiskCache(directory: dir.url, configuration: DiskCacheConfiguration(
                sweepInterval: nil, ioThreads: 3, decodeThreads: decodeThreads))
            try await cache.store(image, forKey: "large")
            let reads = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                for _ in 0..<8 { group.addTask { try await cache.image(forKey: "large")?.packedPixels() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(reads.count, 8)
            for pixels in reads { XCTAssertEqual(pixels, image.packedPixels(), "\(decodeThreads) decode threads") }
            await cache.shutdown()
        }
    }

    func testExpiredEntriesAreMissesButKeepTheirValidators() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let stale = DiskCacheMetadata(etag: "\"e\"", expires: Date(timeIntervalSinceNow: -1))
        try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "k", metadata: stale)
        try await cache.storeData(Data("bytes".utf8), forKey: "k", metadata: stale)
        let image = try await cache.image(forKey: "k")
        let data = try await cache.data(forKey: "k")
        XCTAssertNil(image)
        XCTAssertNil(data)
        let entry = try await cache.entry(forKey: "k")
        XCTAssertEqual(entry?.isExpired, true)
        XCTAssertEqual(entry?.metadata.etag, "\"e\"", "an expired entry can still be revalidated")
    }

    func testOriginalBytesAreSeparateFromTheBitmap() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let bytes = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 * 13) })
        try await cache.storeData(bytes, forKey: "k")
        let noImage = try await cache.image(forKey: "k")
        XCTAssertNil(noImage)
        try await cache.store(TestPixels.image(width: 10, height: 10), forKey: "k")
        let data = try await cache.data(forKey: "k")
        XCTAssertEqual(data, bytes)
        var count = await cache.totalCount
        XCTAssertEqual(count, 2)
        try await cache.remove(forKey: "k")
        count = await cache.totalCount
        XCTAssertEqual(count, 0)
        XCTAssertEqual(entryFiles(dir), [])
    }

    func testDamagedFilesAreMissesAndAreDeleted() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        try await cache.store(TestPixels.image(width: 100, height: 80), forKey: "k")
        let name = try XCTUnwrap(entryFiles(dir).first)
        let path = dir.path + "/" + name
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: path))
        let image = try await cache.image(forKey: "k")
        XCTAssertNil(image)
        XCTAssertEqual(entryFiles(dir), [])
        try await cache.store(TestPixels.image(width: 100, height: 80), forKey: "k")
        try Data(bytes.prefix(300)).write(to: URL(fileURLWithPath: path))  // truncated
        let again = try await cache.image(forKey: "k")
        XCTAssertNil(again)
        let stats = await cache.statistics
        XCTAssertEqual(stats.corruptEntriesRemoved, 2)
        XCTAssertEqual(stats.totalCount, 0)
    }

    func testSizeLimitEvictsLeastRecentlyUsedDownToTheLowWaterMark() async throws {
        let dir = TemporaryDirectory()
        let probe = try open(dir)
        try await probe.store(TestPixels.image(width: 64, height: 64, seed: 0), forKey: "probe")
        let entrySize = await probe.totalSize
        try await probe.removeAll()

        // Room for 10 entries; trims go down to 5.
        let cache = try open(dir, maxSize: entrySize * 10 + entrySize / 2, trimRatio: 0.5)
        for i in 0..<10 {
            try await cache.store(TestPixels.image(width: 64, height: 64, seed: UInt64(i % 2)), forKey: "k\(i)")
        }
        // Use the first three, so k3… are the least recently used.
        for i in 0..<3 { _ = try await cache.image(forKey: "k\(i)") }
        try await cache.store(TestPixels.image(width: 64, height: 64, seed: 0), forKey: "k10")
        await cache.sweep()  // the trim runs in the background; a sweep runs after it
        var present: [Int] = []
        for i in 0...10 where await cache.contains("k\(i)") { present.append(i) }
        XCTAssertEqual(present, [0, 1, 2, 9, 10])
        let total = await cache.totalSize
        XCTAssertEqual(total, diskSize(dir))
        XCTAssertLessThanOrEqual(total, entrySize * 5 + entrySize / 4)
        let stats = await cache.statistics
        XCTAssertEqual(stats.evictions, 6)
    }

    func testIndexAfterRestartMatchesTheDirectoryAndKeepsAccessOrder() async throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try open(dir)
            for i in 0..<6 { try await cache.store(TestPixels.image(width: 32, height: 32), forKey: "k\(i)") }
        }
        // Last access survives a restart as the files' modification times: make k0 the oldest.
        for (i, name) in entryFiles(dir).enumerated() {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: Double(-100 + i))],
                                                  ofItemAtPath: dir.path + "/" + name)
        }
        let reopened = try open(dir)
        let count = await reopened.totalCount
        let size = await reopened.totalSize
        XCTAssertEqual(count, 6)
        XCTAssertEqual(size, diskSize(dir))
        for i in 0..<6 {
            let hasKey = await reopened.contains("k\(i)")
            XCTAssertTrue(hasKey)
        }
        // Over the limit at open: the oldest by modification time go first.
        let oldest = entryFiles(dir)[0]
        let small = try open(dir, maxSize: size - 1, trimRatio: 0.9)
        let smallCount = await small.totalCount
        XCTAssertEqual(smallCount, 5)
        XCTAssertFalse(entryFiles(dir).contains(oldest))
    }

    func testAgeLimitRemovesEntriesNotUsedRecently() async throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try open(dir)
            for i in 0..<4 { try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "k\(i)") }
        }
        let names = entryFiles(dir)
        for name in names.prefix(2) {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)],
                                                  ofItemAtPath: dir.path + "/" + name)
        }
        let cache = try open(dir, maxAge: .seconds(3600))
        await cache.removeExpired()
        XCTAssertEqual(entryFiles(dir), Array(names.suffix(2)))
        let stats = await cache.statistics
        XCTAssertEqual(stats.expirations, 2)
        XCTAssertEqual(stats.totalCount, 2)
    }

    func testDirectoryDeletedUnderneathIsRecreatedOnTheNextWrite() async throws {
        let parent = TemporaryDirectory()
        let url = parent.url.appendingPathComponent("cache", isDirectory: true)
        let cache = try DiskCache(directory: url, configuration: DiskCacheConfiguration(sweepInterval: nil))
        for i in 0..<3 { try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "k\(i)") }
        try FileManager.default.removeItem(at: url)
        let gone = try await cache.image(forKey: "k0")
        XCTAssertNil(gone)
        try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "new")
        let back = try await cache.image(forKey: "new")
        XCTAssertNotNil(back)
        let count = await cache.totalCount
        XCTAssertEqual(count, 1, "the index forgets entries that went with the directory")
    }

    func testTwoCachesSharingADirectorySeeEachOthersEntries() async throws {
        let dir = TemporaryDirectory()
        let a = try open(dir)
        let b = try open(dir)
        let image = TestPixels.image(width: 20, height: 20)
        try await a.store(image, forKey: "shared")
        let fromB = try await b.image(forKey: "shared")
        XCTAssertEqual(fromB?.packedPixels(), image.packedPixels())
        try await b.store(TestPixels.image(width: 5, height: 5), forKey: "only-b")
        await a.sweep()  // the sweep's rescan picks up b's entry
        let count = await a.totalCount
        let size = await a.totalSize
        XCTAssertEqual(count, 2)
        XCTAssertEqual(size, diskSize(dir))
    }

    func testRemoveAllAndStatistics() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        for i in 0..<5 { try await cache.store(TestPixels.image(width: 8, height: 8), forKey: "k\(i)") }
        try await cache.removeAll()
        XCTAssertEqual(entryFiles(dir), [])
        let size = await cache.totalSize
        XCTAssertEqual(size, 0)
        let hit = await cache.contains("k0")
        XCTAssertFalse(hit)
    }

    func testInvalidKeysAndMetadataThrow() async throws {
        let dir = TemporaryDirectory()
        let cache = try open(dir)
        let image = TestPixels.image(width: 4, height: 4)
        do {
            try await cache.store(image, forKey: "")
            XCTFail("an empty key must be rejected")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        do {
            try await cache.store(image, forKey: "k", metadata: DiskCacheMetadata(etag: String(repeating: "x", count: 9000)))
            XCTFail("an oversized ETag must be rejected")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        let stats = await cache.statistics
        XCTAssertEqual(stats.writeErrors, 2)
        XCTAssertEqual(dir.files(), [], "failed writes leave nothing behind")
    }

    func testUncreatableDirectoryThrows() {
        XCTAssertThrowsError(try DiskCache(directory: URL(fileURLWithPath: "/proc/imagekit-cannot-be-here"))) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .io)
        }
    }
}
