import CImageCore
import Foundation
import Glibc
import ImageKit
import TestServers
import XCTest

/// Writers SIGKILLed at random moments never leave an entry that reads back
/// wrong: every entry is exactly what some write stored, or a miss. Every
/// third round two writer processes share the directory.
final class DiskCacheCrashTests: XCTestCase {
    func testWritersKilledAtRandomMomentsLeaveNoCorruptEntries() async throws {
        let dir = TemporaryDirectory("imagekit-crash")
        var rng = SystemRandomNumberGenerator()
        var kills = 0
        for round in 0..<210 {
            let writers = try (0..<(round % 3 == 0 ? 2 : 1)).map { n in
                try TestHelper.start(["write-loop", dir.path, "\(round * 2 + n)"])
            }
            for child in writers { XCTAssertEqual(try child.readLine(), "ready") }
            usleep(UInt32.random(in: 0...12_000, using: &rng))
            for child in writers {
                kill(child.pid, SIGKILL)
                // Killed by SIGKILL (the low 7 bits of the wait status hold the signal).
                if child.stop() & 0x7F == SIGKILL { kills += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(kills, 200)

        // Every entry reads back exactly (checked pixel for pixel against what its version wrote) or is a miss.
        let result = TestHelper.fields(try TestHelper.run(["verify", dir.path]))
        XCTAssertEqual(result["corrupt"], 0, "corrupt reads")
        XCTAssertEqual(result["wrong"], 0, "entries that read back different pixels")
        XCTAssertGreaterThan(result["ok"] ?? 0, 0)

        // A fresh cache indexes exactly the entry files; leftover temporary files are not entries.
        let cache = try DiskCache(directory: dir.url, configuration: DiskCacheConfiguration(sweepInterval: nil))
        let entries = dir.files().filter { $0.hasSuffix(".ikc") }
        let count = await cache.totalCount
        XCTAssertEqual(count, entries.count)
        for key in 0..<24 {
            _ = try await cache.image(forKey: "entry-\(key)")
        }
        let stats = await cache.statistics
        XCTAssertEqual(stats.corruptEntriesRemoved, 0)
        XCTAssertEqual(stats.hits, result["ok"])
    }
}
