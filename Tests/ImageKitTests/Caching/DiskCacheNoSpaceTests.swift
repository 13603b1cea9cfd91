import Foundation
import ImageKit
import ImageKitTestSupport
import TestServers
import XCTest

/// A disk cache on a real 3 MiB tmpfs: filling it gives a clean `noSpace`
/// error and no partial files, reads keep working, and writes work again once
/// entries are removed. Needs permission to mount (root in CI and the dev
/// machines); elsewhere it is skipped, and StoreFileTests covers ENOSPC
/// through the store's fault-injection option.
final class DiskCacheNoSpaceTests: XCTestCase {
    /// Incompressible pixels (noise), so every entry takes about its raw size on disk.
    private func noise(_ seed: UInt64) -> Image {
        var rng = SplitMix(seed: seed)
        let pixels = (0..<(256 * 256)).flatMap { _ -> [UInt8] in
            let v = rng.next()
            return [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16), 255]
        }
        // The pixels are valid by construction.
        return try! Image(width: 256, height: 256, premultipliedRGBA: pixels)
    }

    func testFullDiskFailsCleanlyAndRecovers() async throws {
        let mountPoint = TemporaryDirectory("imagekit-tmpfs")
        do {
            try ChildProcess.run(["/bin/mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint.path])
        } catch {
            throw XCTSkip("cannot mount a tmpfs here (not root?): \(error)")
        }
        defer { try? ChildProcess.run(["/bin/umount", mountPoint.path]) }
        let cache = try DiskCache(directory: mountPoint.url.appendingPathComponent("cache"),
                                  configuration: DiskCacheConfiguration(sweepInterval: nil))
        var stored: [Int] = []
        var failure: ImageKitError?
        for i in 0..<40 {
            do {
                try await cache.store(noise(UInt64(i)), forKey: "k\(i)")
                stored.append(i)
            } catch {
                failure = error
                break
            }
        }
        let error = try XCTUnwrap(failure, "3 MiB cannot hold 40 entries of 256 KiB")
        XCTAssertEqual(error.code, .noSpace, "\(error)")
        XCTAssertTrue(error.message.contains("No space left"), error.message)
        XCTAssertGreaterThan(stored.count, 5)
        let files = try FileManager.default.contentsOfDirectory(atPath: mountPoint.path + "/cache")
        XCTAssertEqual(files.filter { !$0.hasSuffix(".ikc") }, [], "no partial or temporary files")
        XCTAssertEqual(files.count, stored.count)

        // Reads keep working.
        for i in stored {
            let image = try await cache.image(forKey: "k\(i)")
            XCTAssertEqual(image?.packedPixels(), noise(UInt64(i)).packedPixels())
        }
        let stats = await cache.statistics
        XCTAssertEqual(stats.writeErrors, 1)
        XCTAssertEqual(stats.totalCount, stored.count)

        // Writes work again once there is room.
        try await cache.remove(forKey: "k0")
        try await cache.remove(forKey: "k1")
        try await cache.store(noise(99), forKey: "after")
        let after = try await cache.image(forKey: "after")
        XCTAssertNotNil(after)
    }
}
