import ImageKit
import Logging
import Metrics
import Tracing

/// Logs, metrics and traces for an ``ImageKit/ImageManager`` and its ``ImageKit/Downloader``,
/// in the server ecosystem's terms: ``ImageKitLogObserver`` (swift-log), ``ImageKitMetrics``
/// (swift-metrics) and ``ImageKitTracing`` (swift-distributed-tracing), added to their
/// configurations in one step.
///
/// ```swift
/// let observability = ImageKitObservability(logger: logger)  // MetricsSystem's and InstrumentationSystem's backends
/// let manager = try ImageManager(cache: cache, observability: observability)
/// ```
public struct ImageKitObservability: Sendable {
    /// The log observer.
    public let logging: ImageKitLogObserver
    /// The metrics observer (of the manager's events and of the downloader's).
    public let metrics: ImageKitMetrics
    /// The per-load span factory.
    public let tracing: ImageKitTracing

    /// Logs to `logger`, metrics through `metricsFactory` (default: `MetricsSystem`'s), spans
    /// from `tracer` (default nil: `InstrumentationSystem`'s). Bootstrap `MetricsSystem` and
    /// `InstrumentationSystem` before: the defaults are taken now.
    public init(logger: Logger, metricsFactory: any MetricsFactory = MetricsSystem.factory,
                tracer: (any Tracer)? = nil) {
        logging = ImageKitLogObserver(logger: logger)
        metrics = ImageKitMetrics(factory: metricsFactory)
        tracing = ImageKitTracing(tracer: tracer)
    }

    /// `configuration` with the log and metrics observers and the span factory added.
    public func instrument(_ configuration: ImageManagerConfiguration) -> ImageManagerConfiguration {
        var configuration = configuration
        configuration.observers += [logging, metrics]
        configuration.loadObserverFactories.append(tracing)
        return configuration
    }

    /// `configuration` with the metrics observer added (downloads are logged and traced through
    /// the manager's events).
    public func instrument(_ configuration: DownloaderConfiguration) -> DownloaderConfiguration {
        var configuration = configuration
        configuration.observers.append(metrics)
        return configuration
    }
}
