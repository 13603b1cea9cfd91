#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ImageKit
import Logging

/// Logs an ``ImageKit/ImageManager``'s events through swift-log.
///
/// Levels, so that `info` stays quiet on a healthy service:
///
/// | level | events |
/// |---|---|
/// | `trace` | every stage: cache lookups (hits included), download start and response, decode, transform, encode, store |
/// | `debug` | each load's end: completed (with the tier), cancelled; failures that say nothing new (a blocklisted URL, a cache-only miss, a cancellation, a shut-down manager); a failed stage, before its load's failure |
/// | `info` | loads that failed for a passing reason: timeouts, connection failures, 5xx, load shedding, deadlines |
/// | `warning` | loads that failed for a lasting reason (``ImageKit/ImageKitError/isLastingLoadFailure``: 4xx, data that does not decode, limits) |
/// | `error` | faults of the machine: I/O, a full disk, out of memory, internal errors — a failed load, or a failed cache write (which fails no load) |
///
/// Metadata keys: `imagekit.url`, `imagekit.cache_key`, `imagekit.tier`, `imagekit.hit`,
/// `imagekit.task`, `imagekit.duration_ms`, `imagekit.bytes`, `imagekit.status`,
/// `imagekit.size`, `imagekit.format`, `imagekit.transformer`, `imagekit.error` (the failure's
/// kind, as in the metrics) and `imagekit.error_message`. An event below the logger's level
/// costs a comparison: nothing is built for it.
public struct ImageKitLogObserver: ImageManagerObserver {
    /// The logger lines go to; its level decides what is logged.
    public let logger: Logger
    /// The logger's level (a log handler's level has value semantics: it is this logger's for good).
    private let level: Logger.Level

    /// An observer logging to `logger`.
    public init(logger: Logger) {
        self.logger = logger
        level = logger.logLevel
    }

    /// Logs one event at its level.
    public func receive(_ event: ImageManagerEvent) {
        let eventLevel = Self.level(of: event)
        guard eventLevel >= level else { return }
        switch event {
        case .cacheQuery(let url, let key, let tier, let hit, let duration):
            logger.log(level: eventLevel, "cache lookup", metadata: [
                "imagekit.url": "\(MessageURL.describe(url))", "imagekit.cache_key": "\(MessageURL.describe(key))",
                "imagekit.tier": "\(tier)", "imagekit.hit": "\(hit)",
                "imagekit.duration_ms": "\(duration.milliseconds)",
            ])
        case .originalDataQuery(let url, let key, let hit, let duration):
            logger.log(level: eventLevel, "cache lookup", metadata: [
                "imagekit.url": "\(MessageURL.describe(url))", "imagekit.cache_key": "\(MessageURL.describe(key))",
                "imagekit.tier": "original", "imagekit.hit": "\(hit)",
                "imagekit.duration_ms": "\(duration.milliseconds)",
            ])
        case .downloadStarted(let url):
            logger.log(level: eventLevel, "download started", metadata: ["imagekit.url": "\(MessageURL.describe(url))"])
        case .downloadFinished(let url, let response, let metrics):
            logger.log(level: eventLevel, "download finished", metadata: [
                "imagekit.url": "\(MessageURL.describe(url))", "imagekit.status": "\(response.statusCode)",
                "imagekit.bytes": "\(metrics.bodyBytes)", "imagekit.duration_ms": "\(metrics.total.milliseconds)",
            ])
        case .downloadFailed(let url, let error, let duration):
            logger.log(level: eventLevel, "download failed", metadata: failure(url, error, duration))
        case .decodeStarted(let url, let key):
            logger.log(level: eventLevel, "decode started",
                       metadata: ["imagekit.url": "\(MessageURL.describe(url))",
                                  "imagekit.cache_key": "\(MessageURL.describe(key))"])
        case .decoded(let url, let key, let size, let duration):
            logger.log(level: eventLevel, "decoded", metadata: [
                "imagekit.url": "\(MessageURL.describe(url))", "imagekit.cache_key": "\(MessageURL.describe(key))",
                "imagekit.size": "\(size)",
                "imagekit.duration_ms": "\(duration.milliseconds)",
            ])
        case .decodeFailed(let url, let key, let error, let duration):
            logger.log(level: eventLevel, "decode failed", metadata: failure(url, error, duration, key: key))
        case .transformed(let url, let key, let transformer, let duration, let error):
            if let error {
                var metadata = failure(url, error, duration, key: key)
                metadata["imagekit.transformer"] = "\(transformer)"
                logger.log(level: eventLevel, "transform failed", metadata: metadata)
            } else {
                logger.log(level: eventLevel, "transformed", metadata: [
                    "imagekit.url": "\(MessageURL.describe(url))", "imagekit.cache_key": "\(MessageURL.describe(key))",
                    "imagekit.transformer": "\(transformer)", "imagekit.duration_ms": "\(duration.milliseconds)",
                ])
            }
        case .encoded(let url, let key, let format, let bytes, let duration, let error):
            if let error {
                var metadata = failure(url, error, duration, key: key)
                metadata["imagekit.format"] = "\(format)"
                logger.log(level: eventLevel, "encode failed", metadata: metadata)
            } else {
                logger.log(level: eventLevel, "encoded", metadata: [
                    "imagekit.url": "\(MessageURL.describe(url))", "imagekit.cache_key": "\(MessageURL.describe(key))",
                    "imagekit.format": "\(format)",
                    "imagekit.bytes": "\(bytes)", "imagekit.duration_ms": "\(duration.milliseconds)",
                ])
            }
        case .stored(let url, let key, let tiers, let duration, let error):
            if let error {
                var metadata = failure(url, error, duration, key: key)
                metadata["imagekit.tier"] = "\(tiers)"
                logger.log(level: eventLevel, "cache write failed", metadata: metadata)
            } else {
                logger.log(level: eventLevel, "stored", metadata: [
                    "imagekit.url": "\(MessageURL.describe(url))", "imagekit.cache_key": "\(MessageURL.describe(key))",
                    "imagekit.tier": "\(tiers)",
                    "imagekit.duration_ms": "\(duration.milliseconds)",
                ])
            }
        case .completed(let task, let url, let source, let duration):
            logger.log(level: eventLevel, "image loaded", metadata: [
                "imagekit.task": "\(task)", "imagekit.url": "\(MessageURL.describe(url))",
                "imagekit.tier": "\(source == .loader ? "network" : source.description)",
                "imagekit.duration_ms": "\(duration.milliseconds)",
            ])
        case .failed(let task, let url, let error, let duration):
            logger.log(level: eventLevel, "image load failed", metadata: {
                var metadata = failure(url, error, duration)
                metadata["imagekit.task"] = "\(task)"
                return metadata
            }())
        case .cancelled(let task, let url, let duration):
            logger.log(level: eventLevel, "image load cancelled", metadata: [
                "imagekit.task": "\(task)", "imagekit.url": "\(url.map(MessageURL.describe) ?? "")",
                "imagekit.duration_ms": "\(duration.milliseconds)",
            ])
        }
    }

    /// The level `event` is logged at.
    private static func level(of event: ImageManagerEvent) -> Logger.Level {
        switch event {
        case .cacheQuery, .originalDataQuery, .downloadStarted, .downloadFinished, .decodeStarted, .decoded:
            .trace
        case .downloadFailed, .decodeFailed, .completed, .cancelled:
            .debug
        case .transformed(_, _, _, _, let error), .encoded(_, _, _, _, _, let error):
            error == nil ? .trace : .debug
        case .stored(_, _, _, _, let error):
            error == nil ? .trace : .error
        case .failed(_, _, let error, _):
            level(of: error)
        }
    }

    /// The level a load failing with `error` is logged at.
    private static func level(of error: ImageKitError) -> Logger.Level {
        switch error.code {
        case .cancelled, .blocklisted, .notInCache, .shutDown:
            return .debug
        default:
            if error.isLocalFault { return .error }
            return error.isLastingLoadFailure ? .warning : .info
        }
    }

    /// The metadata of a failure.
    private func failure(_ url: URL?, _ error: ImageKitError, _ duration: Duration, key: String? = nil)
        -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "imagekit.url": "\(url.map(MessageURL.describe) ?? "")", "imagekit.error": "\(error.kind)",
            "imagekit.error_message": "\(error.message)", "imagekit.duration_ms": "\(duration.milliseconds)",
        ]
        if let key { metadata["imagekit.cache_key"] = "\(MessageURL.describe(key))" }
        if let status = error.httpStatus { metadata["imagekit.status"] = "\(status)" }
        return metadata
    }
}
