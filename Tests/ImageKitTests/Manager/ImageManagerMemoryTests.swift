import Foundation
import ImageKit
import XCTest

/// What a load holds after it ends: nothing. Download bodies are the large part (a service
/// loading 3 MB originals holds one per load in flight), so the tests count the bytes the
/// downloader's body allocator has handed out and not got back.
final class ImageManagerMemoryTests: ManagerTestCase {
    /// Loads keep arriving, `window` at a time, onto one decode thread, so decode jobs queue
    /// behind each other without the queue ever running dry: the bodies held must follow the
    /// loads in flight, not the loads so far.
    func testBodiesAreReleasedWhileLoadsKeepArriving() async throws {
        let fixture = try fixture
        let manager = try makeManager { $0.decodeThreads = 1 }
        let body = ManagerFixture.large.count
        let window = 8, total = 120
        let run = unique("same")
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 64), storeCacheType: [],
                                   originalStoreCacheType: [])
        let samples = Collector<DownloaderStatistics>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<total {
                if i >= window { try await group.next() }
                group.addTask {
                    let url = fixture.nginx.url("/same/\(run)-\(i).jpg")
                    _ = try await manager.image(for: url, context: context)
                    samples.append(manager.builtInDownloader.statistics)
                }
            }
            try await group.waitForAll()
        }
        let bodies = samples.all.map(\.bodies).max() ?? 0
        let bytes = samples.all.map(\.bodyBytes).max() ?? 0
        // In flight: `window` loads, each with at most one body (downloading, queued or decoding).
        XCTAssertLessThanOrEqual(bodies, window, "bodies held at the peak (\(total) loads of a \(body)-byte body)")
        XCTAssertLessThanOrEqual(bytes, window * (body + 64 << 10), "body bytes held at the peak")
        await DownloadTesting.waitUntil("every body is released") { manager.builtInDownloader.statistics.bodies == 0 }
        XCTAssertEqual(manager.builtInDownloader.statistics.bodyBytes, 0)
        await ManagerTesting.assertIdle(manager)
    }

    /// The same flow in a child process of the release build (what `make test` builds), bounded
    /// by what the operating system sees: once the process has warmed up, its peak resident
    /// set must not grow with the number of loads. Holding each body until the decode queue
    /// drains (the defect this guards against) grows it by about one body per load.
    ///
    /// Release builds only: debug builds are the sanitizer builds (`make sanitize`), whose
    /// allocators hold freed memory back on purpose (ASan's quarantine), so their resident set
    /// says nothing about what ImageKit holds. The body counter test above runs in every build.
    func testResidentMemoryDoesNotGrowWithLoads() async throws {
        #if DEBUG
        throw XCTSkip("the resident-set bound is checked in release builds (make test)")
        #else
        let fixture = try fixture
        // Noise, so the body is large (~4 MB) next to what the process holds anyway.
        let (width, height) = (2000, 1500)
        let noise = makeJPEG(LoopbackFixture.pattern(width * height * 4, seed: 7), width: width, height: height)
        let path = "/\(unique("noise")).jpg"
        try fixture.write(path, noise)
        let body = noise.count
        let window = 8, total = 160
        let base = fixture.nginx.url(path).absoluteString
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-rss-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let line = try await Task.detached {
            try TestHelper.run(["cold-loads", base, "\(total)", "\(window)", dir.path])
        }.value
        let fields = TestHelper.fields(line)
        let warm = try XCTUnwrap(fields["warm-hwm"], line), end = try XCTUnwrap(fields["end-hwm"], line)
        let growth = (end - warm) << 10
        // Loads in flight hold at most `window` bodies and their decodes; allow that twice over
        // plus 16 MiB for allocator noise. Retaining the bodies would add ~(total − 3 × window) of them.
        let bound = 2 * window * (body + (1 << 20)) + (16 << 20)
        XCTAssertGreaterThan((total - 3 * window) * body, bound, "the bound must be able to catch retained bodies")
        XCTAssertLessThanOrEqual(growth, bound, "peak RSS grew by \(growth >> 20) MiB over \(total) loads (\(line))")
        XCTAssertLessThanOrEqual(try XCTUnwrap(fields["peak-bodies"], line), window, line)
        #endif
    }
}
