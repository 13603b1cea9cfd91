import Foundation
import ImageKit
import ImageKitServer
import Logging
import MetricsTestKit
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import XCTest

/// ``ImageManagerService`` under swift-service-lifecycle: drains on graceful shutdown, cancels
/// on cancellation, reports its gauges, and outlives the services listed after it.
final class ImageManagerLifecycleTests: ServerTestCase {
    func testGracefulShutdownDrainsTheLoadsInFlight() async throws {
        let o = try origin
        let m = try makeManager()
        let k = unique("drain")
        try await testGracefulShutdown { trigger in
            let stopped = Mutex(false)
            let service = Task {
                try await ImageManagerService(manager: m).run()
                stopped.withLock { $0 = true }
            }
            let held = Task { try await m.image(for: o.script.url("/gate_png?key=\(k)")).image.width }
            await waitUntil("the request reached the server") { try o.script.stats(k).count == 1 }
            trigger.triggerGracefulShutdown()
            await waitUntilRefusing(m)
            XCTAssertFalse(stopped.withLock { $0 }, "still draining")
            try o.script.open(k)
            let width = try await held.value
            XCTAssertEqual(width, 16, "the load in flight finished")
            try await service.value
            XCTAssertTrue(m.statistics.isIdle)
            XCTAssertTrue(m.builtInDownloader.statistics.isIdle)
        }
    }

    /// Waits until the manager refuses loads: a URL it never loads fails with `.invalidURL`
    /// while it runs and with `.shutDown` once it stops.
    private func waitUntilRefusing(_ m: ImageManager, file: StaticString = #filePath, line: UInt = #line) async {
        let probe = URL(string: "ftp://images.example/a.png")!
        for _ in 0..<2000 {
            if await loadError(m, probe)?.code == .shutDown { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("the manager still takes loads", file: file, line: line)
    }

    func testCancellationCancelsTheLoadsInFlight() async throws {
        let o = try origin
        let m = try makeManager()
        let k = unique("cancel")
        let service = Task { try await ImageManagerService(manager: m).run() }
        let held = Task { try await m.image(for: o.script.url("/gate_png?key=\(k)")) }
        await waitUntil("the request reached the server") { try o.script.stats(k).count == 1 }
        service.cancel()
        try await service.value
        do {
            _ = try await held.value
            XCTFail("the load in flight finished")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertTrue(m.statistics.isIdle)
        guard await loadError(m, o.nginx.url("/photo.png"))?.code == .shutDown else { return XCTFail() }
        try o.script.open(k)
    }

    func testItReportsTheStatisticsWhileRunningAndAfterTheDrain() async throws {
        let o = try origin
        let metrics = TestMetrics()
        let m = try makeManager()
        let reporter = ImageManagerStatisticsReporter(manager: m, factory: metrics)
        let k = unique("report")
        try await testGracefulShutdown { trigger in
            let service = Task {
                let service = ImageManagerService(manager: m, statistics: reporter,
                                                  reportingInterval: .milliseconds(10))
                try await service.run()
            }
            let held = Task { _ = try await m.image(for: o.script.url("/gate_png?key=\(k)")) }
            await waitUntil("a report saw the load in flight") {
                try metrics.expectGauge(ImageKitMetricName.loadsInFlight).lastValue == 1
            }
            trigger.triggerGracefulShutdown()
            try o.script.open(k)
            try await held.value
            try await service.value
            XCTAssertEqual(try metrics.expectGauge(ImageKitMetricName.loadsInFlight).lastValue, 0,
                           "reported once more after the drain")
            XCTAssertEqual(try metrics.expectGauge(ImageKitMetricName.cacheEntries, [("tier", "memory")]).lastValue, 1)
        }
    }

    /// Listed before the service that calls it, the manager still loads while that service
    /// answers its last requests, and drains after it.
    func testInAServiceGroupItStopsAfterTheServicesListedAfterIt() async throws {
        let o = try origin
        let m = try makeManager()
        let caller = LastRequestService(manager: m, url: o.nginx.url("/photo.png"))
        let group = ServiceGroup(services: [ImageManagerService(manager: m), caller],
                                 logger: Logger(label: "imagekit-test") { _ in SwiftLogNoOpLogHandler() })
        let running = Task { try await group.run() }
        await waitUntil("the caller runs") { caller.started.withLock { $0 } }
        await group.triggerGracefulShutdown()
        try await running.value
        XCTAssertEqual(caller.lastLoad.withLock { $0 }, "loaded 40x30")
        XCTAssertTrue(m.statistics.isIdle)
        guard await loadError(m, o.nginx.url("/photo.png"))?.code == .shutDown else { return XCTFail() }
    }
}

/// A stand-in for an HTTP server: runs until graceful shutdown, then makes one last load through
/// the manager, as a server answers the requests in flight before it stops.
private final class LastRequestService: Service {
    let manager: ImageManager
    let url: URL
    let started = Mutex(false)
    let lastLoad = Mutex("")

    init(manager: ImageManager, url: URL) {
        self.manager = manager
        self.url = url
    }

    func run() async throws {
        started.withLock { $0 = true }
        try await gracefulShutdown()
        let outcome: String
        do {
            let image = try await manager.image(for: url).image
            outcome = "loaded \(image.width)x\(image.height)"
        } catch {
            outcome = "failed: \(error)"
        }
        lastLoad.withLock { $0 = outcome }
    }
}
