import ImageKit
import Metrics
import Synchronization

/// Reports the gauges of one ``ImageKit/ImageManager`` — its cache tiers' sizes, the loads,
/// pipelines and transfers in flight, the download bodies alive, the blocklist — and counts its
/// cache evictions, through swift-metrics under the names of ``ImageKitMetricName``.
///
/// The figures are read from the manager's, its cache's and its downloader's (the manager's
/// loader, or the first ``ImageKit/Downloader`` an ``ImageKit/ImageLoadersManager`` asks) `statistics` each
/// time ``report()`` is called: ``ImageManagerService`` calls it periodically, and a
/// Prometheus endpoint may call it before each scrape. Use one reporter per manager (it counts
/// evictions from the difference between two reports). A cache or loader a load's context
/// names is not included.
public final class ImageManagerStatisticsReporter: Sendable {
    /// The manager whose figures are reported.
    public let manager: ImageManager
    private let memorySize: Gauge
    private let diskSize: Gauge
    private let memoryEntries: Gauge
    private let diskEntries: Gauge
    private let loadsInFlight: Gauge
    private let activePipelines: Gauge
    private let waitingPipelines: Gauge
    private let queuedDownloads: Gauge
    private let runningDownloads: Gauge
    private let bodyBytes: Gauge
    private let blocklisted: Gauge
    private let evictions: Evictions<Counter>
    /// The eviction totals at the last report.
    private let reported = Mutex(Evictions(memoryLimit: 0, memoryExpired: 0, diskLimit: 0, diskExpired: 0))

    /// The tiers' eviction figures.
    private struct Evictions<Value: Sendable>: Sendable {
        var memoryLimit: Value
        var memoryExpired: Value
        var diskLimit: Value
        var diskExpired: Value
    }

    /// A reporter of `manager`'s figures through metrics made by `factory` (default: the one
    /// `MetricsSystem` was bootstrapped with).
    public init(manager: ImageManager, factory: any MetricsFactory = MetricsSystem.factory) {
        self.manager = manager
        typealias Name = ImageKitMetricName
        func gauge(_ label: String, _ dimensions: [(String, String)] = []) -> Gauge {
            Gauge(label: label, dimensions: dimensions, factory: factory)
        }
        func evictions(_ tier: String, _ reason: String) -> Counter {
            Counter(label: Name.cacheEvictions, dimensions: [("tier", tier), ("reason", reason)], factory: factory)
        }
        memorySize = gauge(Name.cacheSize, [("tier", "memory")])
        diskSize = gauge(Name.cacheSize, [("tier", "disk")])
        memoryEntries = gauge(Name.cacheEntries, [("tier", "memory")])
        diskEntries = gauge(Name.cacheEntries, [("tier", "disk")])
        loadsInFlight = gauge(Name.loadsInFlight)
        activePipelines = gauge(Name.pipelines, [("state", "active")])
        waitingPipelines = gauge(Name.pipelines, [("state", "waiting")])
        queuedDownloads = gauge(Name.downloadsInFlight, [("state", "queued")])
        runningDownloads = gauge(Name.downloadsInFlight, [("state", "running")])
        bodyBytes = gauge(Name.downloadBodyBytes)
        blocklisted = gauge(Name.blocklistedURLs)
        self.evictions = Evictions(memoryLimit: evictions("memory", "limit"),
                                   memoryExpired: evictions("memory", "expired"),
                                   diskLimit: evictions("disk", "limit"), diskExpired: evictions("disk", "expired"))
    }

    /// Reads the statistics now and reports them (the disk tier's once its index is loaded). The
    /// tier gauges and eviction counts are those of the manager's ``ImageKit/ImageCache``: its
    /// cache, or the first one among an ``ImageKit/ImageCachesManager``'s caches; without one
    /// they are not reported.
    public func report() async {
        let loads = manager.statistics
        loadsInFlight.record(loads.runningTasks)
        activePipelines.record(loads.activePipelines)
        waitingPipelines.record(loads.waitingPipelines)
        if let downloads = Self.downloader(in: manager.loader)?.statistics {
            queuedDownloads.record(downloads.queuedTransfers)
            runningDownloads.record(downloads.runningTransfers)
            bodyBytes.record(downloads.bodyBytes)
        }
        blocklisted.record(loads.blocklistedURLs)
        guard let cache = Self.imageCache(in: manager.cache) else { return }
        let memory = cache.memoryCache.statistics
        let disk = await cache.diskCache.statistics
        memorySize.record(memory.totalCost)
        memoryEntries.record(memory.totalCount)
        diskSize.record(disk.totalSize)
        diskEntries.record(disk.totalCount)
        // Counted from the totals' growth since the highest totals reported (two reports racing
        // with each other count each eviction once).
        let added = reported.withLock { last -> Evictions<Int> in
            let added = Evictions(memoryLimit: max(0, memory.evictions - last.memoryLimit),
                                  memoryExpired: max(0, memory.expirations - last.memoryExpired),
                                  diskLimit: max(0, disk.evictions - last.diskLimit),
                                  diskExpired: max(0, disk.expirations - last.diskExpired))
            last.memoryLimit += added.memoryLimit
            last.memoryExpired += added.memoryExpired
            last.diskLimit += added.diskLimit
            last.diskExpired += added.diskExpired
            return added
        }
        for (counter, count) in [(evictions.memoryLimit, added.memoryLimit),
                                 (evictions.memoryExpired, added.memoryExpired),
                                 (evictions.diskLimit, added.diskLimit),
                                 (evictions.diskExpired, added.diskExpired)] where count > 0 {
            counter.increment(by: count)
        }
    }

    /// `loader` when it is a ``ImageKit/Downloader``, else the one of highest priority among the
    /// loaders of an ``ImageKit/ImageLoadersManager`` (searched depth first).
    static func downloader(in loader: any ImageLoading) -> Downloader? {
        if let downloader = loader as? Downloader { return downloader }
        guard let manager = loader as? ImageLoadersManager else { return nil }
        for loader in manager.loaders.reversed() {
            if let found = downloader(in: loader) { return found }
        }
        return nil
    }

    /// `cache` when it is an ``ImageKit/ImageCache``, else the first one among the caches of an
    /// ``ImageKit/ImageCachesManager`` (searched depth first).
    static func imageCache(in cache: any ImageCaching) -> ImageCache? {
        if let cache = cache as? ImageCache { return cache }
        guard let manager = cache as? ImageCachesManager else { return nil }
        for cache in manager.caches {
            if let found = imageCache(in: cache) { return found }
        }
        return nil
    }
}
