import Foundation
import ImageKit
import ImageKitTestSupport
import ImageKitServer
import Metrics
import MetricsTestKit
import TestServers
import XCTest

/// ``ImageKitMetrics`` and ``ImageManagerStatisticsReporter`` against swift-metrics' in-memory
/// test backend: names, dimensions and values after real loads from a local origin.
final class ImageKitMetricsTests: ServerTestCase {
    typealias Name = ImageKitMetricName

    /// A manager whose events and transfers `ImageKitMetrics` counts into `metrics`.
    private func observedManager(_ metrics: TestMetrics) throws -> ImageManager {
        let observer = ImageKitMetrics(factory: metrics)
        return try makeManager({ $0.observers = [observer] }, downloader: { $0.observers = [observer] })
    }

    func testLoadsLookupsStagesAndTransfersAreCountedWithTheirDimensions() async throws {
        let o = try origin
        let metrics = TestMetrics()
        let m = try observedManager(metrics)
        let photo = o.nginx.url("/photo.png")

        _ = try await m.image(for: photo)  // downloaded
        await settle(m)
        XCTAssertEqual(try metrics.expectCounter(Name.downloadBytes).totalValue, Int64(o.photo.count))
        _ = try await m.image(for: photo)  // memory
        m.builtInCache.memoryCache.removeAll()
        _ = try await m.image(for: photo)  // disk
        _ = try await m.encodedImage(for: photo, as: .fixed(.jpeg(quality: 80)))  // from the memory tier's image
        guard await loadError(m, o.nginx.url("/missing.png"))?.httpStatus == 404 else { return XCTFail() }
        guard await loadError(m, o.nginx.url("/broken.png"))?.code == .unknownFormat else { return XCTFail() }
        await settle(m)

        func loads(_ result: String, _ tier: String) throws -> Int64 {
            try metrics.expectCounter(Name.loads, [("result", result), ("tier", tier)]).totalValue
        }
        XCTAssertEqual(try loads("success", "network"), 1)
        XCTAssertEqual(try loads("success", "memory"), 2, "the hit, and the variant encoded from memory")
        XCTAssertEqual(try loads("success", "disk"), 1)
        XCTAssertEqual(try loads("failure", "none"), 2)
        XCTAssertEqual(try loads("cancelled", "none"), 0)
        let networkLoads = try metrics.expectTimer(Name.loadDuration, [("result", "success"), ("tier", "network")])
        XCTAssertEqual(networkLoads.values.count, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.loadFailures, [("error", "http_status")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.loadFailures, [("error", "unknown_format")]).totalValue, 1)

        func queries(_ tier: String, _ result: String) throws -> Int64 {
            try metrics.expectCounter(Name.cacheQueries, [("tier", tier), ("result", result)]).totalValue
        }
        // Memory: every load asks once; the disk tiers only when memory missed.
        XCTAssertEqual([try queries("memory", "hit"), try queries("memory", "miss")], [1, 5])
        XCTAssertEqual([try queries("disk", "hit"), try queries("disk", "miss")], [1, 3])
        XCTAssertEqual([try queries("original", "hit"), try queries("original", "miss")], [0, 3])
        XCTAssertEqual(try metrics.expectTimer(Name.cacheQueryDuration, [("tier", "disk")]).values.count, 4)
        XCTAssertEqual(try metrics.expectTimer(Name.cacheQueryDuration, [("tier", "original")]).values.count, 3)
        XCTAssertTrue(metrics.timers(label: Name.cacheQueryDuration, dimensions: [("tier", "memory")]).isEmpty,
                      "memory lookups are counted, not timed")

        XCTAssertEqual(try metrics.expectTimer(Name.decodeDuration).values.count, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.stageFailures, [("stage", "decode")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectTimer(Name.encodeDuration, [("format", "jpeg")]).values.count, 1)
        XCTAssertEqual(try metrics.expectTimer(Name.storeDuration, [("tier", "memory")]).values.count, 3)
        XCTAssertEqual(try metrics.expectTimer(Name.storeDuration, [("tier", "disk")]).values.count, 2)
        XCTAssertEqual(try metrics.expectCounter(Name.stageFailures, [("stage", "store")]).totalValue, 0)
        XCTAssertTrue(try metrics.expectTimer(Name.decodeDuration).values.allSatisfy { $0 > 0 })

        XCTAssertEqual(try metrics.expectCounter(Name.downloads, [("result", "ok")]).totalValue, 2)
        XCTAssertEqual(try metrics.expectCounter(Name.downloads, [("result", "http_error")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.downloads, [("result", "failed")]).totalValue, 0)
        XCTAssertEqual(try metrics.expectTimer(Name.downloadDuration).values.count, 3, "transfers that got a response")
        XCTAssertEqual(try metrics.expectTimer(Name.downloadFirstByte).values.count, 3)
        XCTAssertGreaterThan(try metrics.expectCounter(Name.downloadBytes).totalValue,
                             Int64(o.photo.count + "not an image\n".utf8.count), "the 404 page's bytes too")
    }

    func testCancellationsAndNetworkFailures() async throws {
        let o = try origin
        let metrics = TestMetrics()
        let m = try observedManager(metrics)
        let k = unique("cancel")
        let load = Task { try await m.image(for: o.script.url("/gate_png?key=\(k)")) }
        await waitUntil("the request reached the server") { try o.script.stats(k).count == 1 }
        load.cancel()
        _ = await load.result
        try o.script.open(k)
        // Nothing listens on a port the kernel just handed out: the connection is refused.
        let closed = try Loopback.freePort()
        guard await loadError(m, URL(string: "http://127.0.0.1:\(closed)/a.png")!)?.code == .connectFailed else {
            return XCTFail()
        }
        await settle(m)
        XCTAssertEqual(try metrics.expectCounter(Name.loads, [("result", "cancelled"), ("tier", "none")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.loads, [("result", "failure"), ("tier", "none")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.loadFailures, [("error", "connect_failed")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.downloads, [("result", "cancelled")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(Name.downloads, [("result", "failed")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectTimer(Name.downloadDuration).values.count, 0, "neither got a response")
    }

    /// Two sizes of one URL: two loads, two decodes, one transfer.
    func testASharedTransferIsCountedOnce() async throws {
        let o = try origin
        let metrics = TestMetrics()
        let m = try observedManager(metrics)
        let k = unique("shared")
        let url = o.script.url("/gate_png?key=\(k)")
        let small = Task {
            try await m.image(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 8)))
        }
        await waitUntil("the request reached the server") { try o.script.stats(k).count == 1 }
        let smaller = Task {
            try await m.image(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 4)))
        }
        await waitUntil("both pipelines wait on the transfer") { m.builtInDownloader.statistics.waiters == 2 }
        try o.script.open(k)
        _ = try await (small.value, smaller.value)
        await settle(m)
        let loads = try metrics.expectCounter(Name.loads, [("result", "success"), ("tier", "network")])
        XCTAssertEqual(loads.totalValue, 2)
        XCTAssertEqual(try metrics.expectTimer(Name.decodeDuration).values.count, 2)
        XCTAssertEqual(try metrics.expectCounter(Name.downloads, [("result", "ok")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectTimer(Name.downloadDuration).values.count, 1)
    }

    func testEveryMetricIsMadeOnceWhenTheObserverIsCreated() async throws {
        let o = try origin
        let metrics = TestMetrics()
        let m = try observedManager(metrics)
        let counters = Set(metrics.counters.map(\.label)), timers = Set(metrics.timers.map(\.label))
        XCTAssertEqual(counters,
                       [Name.loads, Name.cacheQueries, Name.stageFailures, Name.downloads, Name.downloadBytes])
        XCTAssertEqual(timers, [Name.loadDuration, Name.cacheQueryDuration, Name.decodeDuration, Name.transformDuration,
                                Name.storeDuration, Name.downloadDuration, Name.downloadFirstByte])
        XCTAssertEqual(metrics.counters(label: Name.loads).count, 5)
        XCTAssertEqual(metrics.counters(label: Name.cacheQueries).count, 6)
        XCTAssertEqual(metrics.counters(label: Name.downloads).count, 5)
        XCTAssertTrue(metrics.counters.allSatisfy { $0.label.hasPrefix("imagekit_") && $0.label.hasSuffix("_total") })
        XCTAssertTrue(metrics.timers.allSatisfy { $0.label.hasPrefix("imagekit_") && $0.label.hasSuffix("_seconds") })
        let made = (metrics.counters.count, metrics.timers.count)
        _ = try await m.image(for: o.nginx.url("/other.png"))
        for _ in 0..<100 { _ = try await m.image(for: o.nginx.url("/other.png")) }
        await settle(m)
        XCTAssertEqual(metrics.counters.count, made.0, "loads make no metric")
        XCTAssertEqual(metrics.timers.count, made.1)
        let hits = try metrics.expectCounter(Name.loads, [("result", "success"), ("tier", "memory")])
        XCTAssertEqual(hits.totalValue, 100)
    }

    func testTheReporterReportsGaugesAndCountsEvictionsOnce() async throws {
        let o = try origin
        let metrics = TestMetrics()
        let cache = try makeCache(memory: MemoryCacheConfiguration(countLimit: 2))
        let m = try makeManager(cache: cache, downloader: { $0.maxConcurrentDownloads = 1 })
        let reporter = ImageManagerStatisticsReporter(manager: m, factory: metrics)
        XCTAssertEqual(Set(metrics.recorders.map(\.label)),
                       [Name.cacheSize, Name.cacheEntries, Name.loadsInFlight, Name.pipelines, Name.downloadsInFlight,
                        Name.downloadBodyBytes, Name.blocklistedURLs])
        XCTAssertTrue(metrics.recorders.allSatisfy { !$0.aggregate }, "gauges")
        func gauge(_ label: String, _ dimensions: [(String, String)] = []) throws -> Double? {
            try metrics.expectGauge(label, dimensions).lastValue
        }
        func evictions(_ tier: String, _ reason: String) throws -> Int64 {
            try metrics.expectCounter(Name.cacheEvictions, [("tier", tier), ("reason", reason)]).totalValue
        }

        // One transfer runs, the other waits in the downloader's queue. (The tasks return nothing:
        // a task keeps its result, and a result its download body.)
        let a = unique("a"), b = unique("b")
        let first = Task { _ = try await m.image(for: o.script.url("/gate_png?key=\(a)")) }
        let second = Task { _ = try await m.image(for: o.script.url("/gate_png?key=\(b)&w=8&h=8")) }
        await waitUntil("one transfer runs, one is queued") {
            let s = m.builtInDownloader.statistics
            return s.runningTransfers == 1 && s.queuedTransfers == 1
        }
        await reporter.report()
        XCTAssertEqual(try gauge(Name.loadsInFlight), 2)
        XCTAssertEqual(try gauge(Name.pipelines, [("state", "active")]), 2)
        XCTAssertEqual(try gauge(Name.pipelines, [("state", "waiting")]), 0)
        XCTAssertEqual(try gauge(Name.downloadsInFlight, [("state", "running")]), 1)
        XCTAssertEqual(try gauge(Name.downloadsInFlight, [("state", "queued")]), 1)
        try o.script.open(a)
        try o.script.open(b)
        try await first.value
        try await second.value

        // A third image in a memory tier of two: one eviction, counted once however often reported.
        _ = try await m.image(for: o.nginx.url("/photo.png"))
        guard await loadError(m, o.nginx.url("/gone.png"))?.code == .httpStatus else { return XCTFail() }
        await settle(m)
        // The 404 body is let go by whichever thread drops the last copy of its Data, which may
        // come after the manager is idle (a body that is never let go fails here too).
        await waitUntil("the download bodies are released") { m.builtInDownloader.statistics.bodies == 0 }
        await reporter.report()
        await reporter.report()
        let memory = m.builtInCache.memoryCache.statistics, disk = await m.builtInCache.diskCache.statistics
        XCTAssertEqual(try gauge(Name.loadsInFlight), 0)
        XCTAssertEqual(try gauge(Name.downloadsInFlight, [("state", "running")]), 0)
        XCTAssertEqual(try gauge(Name.downloadBodyBytes), 0)
        XCTAssertEqual(try gauge(Name.cacheEntries, [("tier", "memory")]), 2)
        XCTAssertEqual(try gauge(Name.cacheSize, [("tier", "memory")]), Double(memory.totalCost))
        XCTAssertGreaterThan(memory.totalCost, 40 * 30 * 4 - 1)
        XCTAssertEqual(try gauge(Name.cacheEntries, [("tier", "disk")]), Double(disk.totalCount))
        XCTAssertEqual(try gauge(Name.cacheSize, [("tier", "disk")]), Double(disk.totalSize))
        XCTAssertGreaterThan(disk.totalSize, 0)
        XCTAssertEqual(try gauge(Name.blocklistedURLs), 1)
        XCTAssertEqual(try evictions("memory", "limit"), 1)
        XCTAssertEqual(try evictions("memory", "expired"), 0)
        XCTAssertEqual(try evictions("disk", "limit"), 0)

        _ = try await m.image(for: o.nginx.url("/other.png"))
        await reporter.report()
        XCTAssertEqual(try evictions("memory", "limit"), 2)
    }
}
