import ImageKit
import Metrics
import Synchronization

/// Counts and times an ``ImageKit/ImageManager``'s loads and a ``ImageKit/Downloader``'s
/// transfers through swift-metrics, under the names of ``ImageKitMetricName``.
///
/// Add it to both configurations — ``ImageKit/ImageManagerConfiguration/observers`` for loads,
/// cache lookups and pipeline stages, ``ImageKit/DownloaderConfiguration/observers`` for the
/// transfers (each counted once, however many loads share it) — or let
/// ``ImageKitObservability`` do it. The gauges come from ``ImageManagerStatisticsReporter``.
///
/// Every metric with a fixed set of dimensions is made once, here, so an event costs one call
/// into the backend's handler (nothing more with swift-metrics' default no-op backend); only
/// the first failure of each kind and the first encode of each format make a metric.
public final class ImageKitMetrics: ImageManagerObserver, DownloaderObserver, Sendable {
    private let factory: any MetricsFactory
    private let loads: Outcomes<Counter>
    private let loadDurations: Outcomes<Timer>
    private let memoryQueries: (hit: Counter, miss: Counter)
    private let diskQueries: (hit: Counter, miss: Counter)
    private let originalQueries: (hit: Counter, miss: Counter)
    private let diskQueryDuration: Timer
    private let originalQueryDuration: Timer
    private let decodeDuration: Timer
    private let transformDuration: Timer
    private let memoryStoreDuration: Timer
    private let diskStoreDuration: Timer
    private let decodeFailures: Counter
    private let transformFailures: Counter
    private let encodeFailures: Counter
    private let storeFailures: Counter
    private let downloads: (ok: Counter, notModified: Counter, httpError: Counter, failed: Counter, cancelled: Counter)
    private let downloadBytes: Counter
    private let downloadDuration: Timer
    private let downloadFirstByte: Timer
    /// ``ImageKitMetricName/loadFailures`` by error kind, made on first use.
    private let failures = Mutex<[String: Counter]>([:])
    /// ``ImageKitMetricName/encodeDuration`` by format, made on first use.
    private let encodeDurations = Mutex<[ImageFormat: Timer]>([:])

    /// The loads' counters or timers, one per (result, tier) pair that occurs.
    private struct Outcomes<Metric: Sendable>: Sendable {
        let memory: Metric
        let disk: Metric
        let network: Metric
        let failure: Metric
        let cancelled: Metric

        init(_ make: (_ result: String, _ tier: String) -> Metric) {
            memory = make("success", "memory")
            disk = make("success", "disk")
            network = make("success", "network")
            failure = make("failure", "none")
            cancelled = make("cancelled", "none")
        }

        /// The metric of a load completed from `source` (the loader's is labelled `network`).
        func success(_ source: ImageSource) -> Metric {
            switch source {
            case .memory: memory
            case .disk: disk
            case .loader: network
            }
        }
    }

    /// Metrics made by `factory` (default: the one `MetricsSystem` was bootstrapped with, which
    /// must then happen before).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        typealias Name = ImageKitMetricName
        func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }
        func timer(_ label: String, _ dimensions: [(String, String)] = []) -> Timer {
            Timer(label: label, dimensions: dimensions, factory: factory)
        }
        func queries(_ tier: String) -> (hit: Counter, miss: Counter) {
            (counter(Name.cacheQueries, [("tier", tier), ("result", "hit")]),
             counter(Name.cacheQueries, [("tier", tier), ("result", "miss")]))
        }
        loads = Outcomes { counter(Name.loads, [("result", $0), ("tier", $1)]) }
        loadDurations = Outcomes { timer(Name.loadDuration, [("result", $0), ("tier", $1)]) }
        memoryQueries = queries("memory")
        diskQueries = queries("disk")
        originalQueries = queries("original")
        diskQueryDuration = timer(Name.cacheQueryDuration, [("tier", "disk")])
        originalQueryDuration = timer(Name.cacheQueryDuration, [("tier", "original")])
        decodeDuration = timer(Name.decodeDuration)
        transformDuration = timer(Name.transformDuration)
        memoryStoreDuration = timer(Name.storeDuration, [("tier", "memory")])
        diskStoreDuration = timer(Name.storeDuration, [("tier", "disk")])
        decodeFailures = counter(Name.stageFailures, [("stage", "decode")])
        transformFailures = counter(Name.stageFailures, [("stage", "transform")])
        encodeFailures = counter(Name.stageFailures, [("stage", "encode")])
        storeFailures = counter(Name.stageFailures, [("stage", "store")])
        downloads = (counter(Name.downloads, [("result", "ok")]),
                     counter(Name.downloads, [("result", "not_modified")]),
                     counter(Name.downloads, [("result", "http_error")]),
                     counter(Name.downloads, [("result", "failed")]),
                     counter(Name.downloads, [("result", "cancelled")]))
        downloadBytes = counter(Name.downloadBytes)
        downloadDuration = timer(Name.downloadDuration)
        downloadFirstByte = timer(Name.downloadFirstByte)
    }

    /// Counts and times a manager's event. Downloads are left to the downloader's events.
    public func receive(_ event: ImageManagerEvent) {
        switch event {
        case .cacheQuery(_, _, let tier, let hit, let duration):
            if tier == .memory {
                (hit ? memoryQueries.hit : memoryQueries.miss).increment()
            } else {
                (hit ? diskQueries.hit : diskQueries.miss).increment()
                diskQueryDuration.recordNanoseconds(duration.nanoseconds)
            }
        case .originalDataQuery(_, _, let hit, let duration):
            (hit ? originalQueries.hit : originalQueries.miss).increment()
            originalQueryDuration.recordNanoseconds(duration.nanoseconds)
        case .decoded(_, _, _, let duration):
            decodeDuration.recordNanoseconds(duration.nanoseconds)
        case .decodeFailed(_, _, let error, _):
            if error != .cancelled { decodeFailures.increment() }
        case .transformed(_, _, _, let duration, let error):
            if error == nil {
                transformDuration.recordNanoseconds(duration.nanoseconds)
            } else {
                transformFailures.increment()
            }
        case .encoded(_, _, let format, _, let duration, let error):
            if error == nil {
                encodeTimer(format).recordNanoseconds(duration.nanoseconds)
            } else {
                encodeFailures.increment()
            }
        case .stored(_, _, let tiers, let duration, let error):
            (tiers == .memory ? memoryStoreDuration : diskStoreDuration).recordNanoseconds(duration.nanoseconds)
            if error != nil { storeFailures.increment() }
        case .completed(_, _, let source, let duration):
            loads.success(source).increment()
            loadDurations.success(source).recordNanoseconds(duration.nanoseconds)
        case .failed(_, _, let error, let duration):
            loads.failure.increment()
            loadDurations.failure.recordNanoseconds(duration.nanoseconds)
            failureCounter(error.kind).increment()
        case .cancelled(_, _, let duration):
            loads.cancelled.increment()
            loadDurations.cancelled.recordNanoseconds(duration.nanoseconds)
        case .downloadStarted, .downloadFinished, .downloadFailed, .decodeStarted:
            break
        }
    }

    /// Counts and times a transfer that ended.
    public func receive(_ event: DownloadEvent) {
        switch event {
        case .finished(_, let response, let metrics):
            (response.statusCode == 304 ? downloads.notModified : downloads.ok).increment()
            record(metrics, responded: true)
        case .failed(_, let error, let metrics):
            let responded: Bool
            switch error.code {
            case .cancelled:
                downloads.cancelled.increment()
                responded = false
            case .httpStatus:
                downloads.httpError.increment()
                responded = true
            default:
                downloads.failed.increment()
                responded = false
            }
            if let metrics { record(metrics, responded: responded) }
        case .started, .response, .progress:
            break
        }
    }

    /// Adds a transfer's body bytes, and its times when it got a response.
    private func record(_ metrics: DownloadMetrics, responded: Bool) {
        if metrics.bodyBytes > 0 { downloadBytes.increment(by: metrics.bodyBytes) }
        guard responded else { return }
        downloadDuration.recordNanoseconds(metrics.total.nanoseconds)
        downloadFirstByte.recordNanoseconds(metrics.firstByte.nanoseconds)
    }

    private func failureCounter(_ kind: String) -> Counter {
        failures.withLock { made in
            if let counter = made[kind] { return counter }
            let counter = Counter(label: ImageKitMetricName.loadFailures, dimensions: [("error", kind)],
                                  factory: factory)
            made[kind] = counter
            return counter
        }
    }

    private func encodeTimer(_ format: ImageFormat) -> Timer {
        encodeDurations.withLock { made in
            if let timer = made[format] { return timer }
            let timer = Timer(label: ImageKitMetricName.encodeDuration,
                              dimensions: [("format", format.description.lowercased())], factory: factory)
            made[format] = timer
            return timer
        }
    }
}
