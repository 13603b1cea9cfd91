import ImageKit
import Logging
import ServiceLifecycle

/// An ``ImageKit/ImageManager`` — with its downloader and cache — as a swift-service-lifecycle
/// `Service`: it runs until the `ServiceGroup` shuts down, then stops the manager.
///
/// On graceful shutdown it drains (``ImageKit/ShutdownMode/drain``): new loads fail with
/// ``ImageKit/ImageKitError/shutDown(_:)``, the loads in flight finish, their disk writes
/// complete and the manager's, cache's and downloader's threads exit before `run()` returns.
/// When its task is cancelled instead, the loads in flight are cancelled
/// (``ImageKit/ShutdownMode/cancel``), and `run()` still returns only once the threads exit.
///
/// A `ServiceGroup` shuts its services down in reverse order, so list this service before the
/// HTTP server that calls the manager: the server stops taking requests and answers those in
/// flight first, then the manager drains. With a statistics reporter, it also reports the
/// gauges every `reportingInterval` while it runs, and once more after the drain.
public struct ImageManagerService: Service, CustomStringConvertible {
    /// The manager this service stops.
    public let manager: ImageManager
    private let statistics: ImageManagerStatisticsReporter?
    private let reportingInterval: Duration
    private let logger: Logger?

    /// A service stopping `manager`, reporting `statistics` (if any) every `reportingInterval`
    /// and logging its shutdown to `logger` (if any).
    public init(manager: ImageManager, statistics: ImageManagerStatisticsReporter? = nil,
                reportingInterval: Duration = .seconds(10), logger: Logger? = nil) {
        self.manager = manager
        self.statistics = statistics
        self.reportingInterval = reportingInterval
        self.logger = logger
    }

    /// `ImageManagerService`, as a `ServiceGroup` logs its services.
    public var description: String { "ImageManagerService" }

    /// Runs until graceful shutdown (then drains the manager) or cancellation (then cancels its
    /// loads), and returns once the manager has stopped.
    public func run() async throws {
        let statistics = self.statistics, interval = reportingInterval
        let mode = await withTaskGroup(of: ShutdownMode?.self) { group in
            if let statistics {
                group.addTask {
                    while !Task.isCancelled {
                        await statistics.report()
                        try? await Task.sleep(for: interval)
                    }
                    return nil
                }
            }
            group.addTask {
                do {
                    try await gracefulShutdown()
                    return .drain
                } catch {
                    return .cancel
                }
            }
            var mode = ShutdownMode.cancel
            for await case let ended? in group {
                mode = ended
                group.cancelAll()
            }
            return mode
        }
        logger?.info("image manager shutting down", metadata: ["imagekit.shutdown": "\(mode)"])
        // In a task of its own: the shutdown waits with Task.sleep, which a cancelled task skips.
        let manager = self.manager
        await Task { await manager.shutdown(mode) }.value
        await statistics?.report()
        logger?.info("image manager stopped")
    }
}
