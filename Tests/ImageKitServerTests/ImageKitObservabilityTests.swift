import Foundation
import ImageKit
import ImageKitServer
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import Tracing
import XCTest

/// ``ImageKitObservability``: one value wires logs, metrics and spans into a manager and its
/// downloader, keeping the observers a configuration already had.
final class ImageKitObservabilityTests: ServerTestCase {
    func testTheTwoLineBootstrapLogsCountsAndTraces() async throws {
        let o = try origin
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "imagekit-test") { _ in handler }
        logger.logLevel = .debug
        let metrics = TestMetrics(), tracer = InMemoryTracer()
        var configuration = ImageManagerConfiguration()
        configuration.observers = [ImageKitLogObserver(logger: Logger(label: "kept") { _ in SwiftLogNoOpLogHandler() })]
        var downloaderConfiguration = DownloaderConfiguration()
        downloaderConfiguration.maxConcurrentDownloads = 2
        downloaderConfiguration.destinationPolicy = Self.loopback

        let observability = ImageKitObservability(logger: logger, metricsFactory: metrics, tracer: tracer)
        let m = try ImageManager(cache: try makeCache(), observability: observability, configuration: configuration,
                                 downloaderConfiguration: downloaderConfiguration)

        XCTAssertEqual(m.configuration.observers.count, 3, "the configuration's own observer is kept")
        XCTAssertEqual(m.configuration.loadObserverFactories.count, 1)
        XCTAssertEqual(m.builtInDownloader.configuration.observers.count, 1)
        XCTAssertEqual(m.builtInDownloader.configuration.maxConcurrentDownloads, 2)

        try await tracer.withSpan("request") { _ in _ = try await m.image(for: o.nginx.url("/photo.png")) }
        await settle(m)
        XCTAssertEqual(handler.entries.filter { $0.message.description == "image loaded" }.count, 1)
        XCTAssertEqual(try metrics.expectCounter(ImageKitMetricName.loads, [("result", "success"), ("tier", "network")])
            .totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter(ImageKitMetricName.downloads, [("result", "ok")]).totalValue, 1)
        let request = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "request" })
        let load = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "imagekit.load" })
        XCTAssertEqual(load.parentSpanID, request.spanID)
    }
}
