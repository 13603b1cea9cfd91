import ImageKit
import Synchronization
import Tracing

/// One load's span (``ImageKitTracing``): records a child span per stage as the stage reports
/// its end, and ends when the load does.
final class ImageLoadSpan: ImageLoadObserver {
    private let span: any Span
    private let tracer: any Tracer
    private let state = Mutex(State())

    private struct State: Sendable {
        var ended = false
        /// When the pipeline's download began (nanoseconds since the epoch), until it ends.
        var downloadStart: UInt64?
    }

    init(span: any Span, tracer: any Tracer) {
        self.span = span
        self.tracer = tracer
    }

    func receive(_ event: ImageManagerEvent) {
        let now = DefaultTracerClock.now.nanosecondsSinceEpoch
        guard !state.withLock({ $0.ended }) else { return }
        switch event {
        case .cacheQuery(_, let key, let tier, let hit, let duration):
            stage("imagekit.cache.query", from: now, lasting: duration, [
                "imagekit.cache.tier": .string(tier.description), "imagekit.cache.hit": .bool(hit),
                "imagekit.cache.key": .string(MessageURL.describe(key)),
            ])
        case .originalDataQuery(_, let key, let hit, let duration):
            stage("imagekit.cache.query", from: now, lasting: duration, [
                "imagekit.cache.tier": "original", "imagekit.cache.hit": .bool(hit),
                "imagekit.cache.key": .string(MessageURL.describe(key)),
            ])
        case .downloadStarted:
            state.withLock { $0.downloadStart = now }
        case .downloadFinished(let url, let response, let metrics):
            let start = downloadStart() ?? Self.instant(now, before: metrics.total)
            stage("imagekit.download", kind: .client, start: start, end: now, [
                "url.full": .string(MessageURL.describe(url)),
                "http.response.status_code": .int64(Int64(response.statusCode)),
                "imagekit.download.bytes": .int64(metrics.bodyBytes),
                "imagekit.download.shared_by": .int64(Int64(metrics.sharedBy)),
            ])
        case .downloadFailed(let url, let error, let duration):
            var attributes: [String: SpanAttribute] = ["url.full": .string(MessageURL.describe(url))]
            if let status = error.httpStatus {
                attributes["http.response.status_code"] = .int64(Int64(status))
            }
            let start = downloadStart() ?? Self.instant(now, before: duration)
            stage("imagekit.download", kind: .client, start: start, end: now, attributes, error: error)
        case .decodeStarted:
            break
        case .decoded(_, _, let size, let duration):
            stage("imagekit.decode", from: now, lasting: duration, [
                "imagekit.image.width": .int64(Int64(size.width)), "imagekit.image.height": .int64(Int64(size.height)),
            ])
        case .decodeFailed(_, _, let error, let duration):
            stage("imagekit.decode", from: now, lasting: duration, [:], error: error)
        case .transformed(_, _, let transformer, let duration, let error):
            stage("imagekit.transform", from: now, lasting: duration, ["imagekit.transformer": .string(transformer)],
                  error: error)
        case .encoded(_, _, let format, let bytes, let duration, let error):
            stage("imagekit.encode", from: now, lasting: duration, [
                "imagekit.image.format": .string(format.description.lowercased()),
                "imagekit.encoded.bytes": .int64(Int64(bytes)),
            ], error: error)
        case .stored(_, _, let tiers, let duration, let error):
            stage("imagekit.store", from: now, lasting: duration, ["imagekit.cache.tier": .string(tiers.description)],
                  error: error)
        case .completed(_, _, let source, _):
            span.updateAttributes {
                $0["imagekit.result"] = "success"
                $0["imagekit.cache.tier"] = source == .loader ? "network" : source.description
            }
        case .failed(_, _, let error, _):
            span.updateAttributes {
                $0["imagekit.result"] = "failure"
                $0["imagekit.error"] = error.kind
            }
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.message))
        case .cancelled:
            span.attributes["imagekit.result"] = "cancelled"
        }
    }

    func loadEnded() {
        let first = state.withLock { s -> Bool in
            defer { s.ended = true }
            return !s.ended
        }
        if first { span.end() }
    }

    /// The download's start, forgotten as it is read.
    private func downloadStart() -> UInt64? {
        state.withLock { s in
            defer { s.downloadStart = nil }
            return s.downloadStart
        }
    }

    /// Records a stage that ended at `end` (nanoseconds since the epoch) after `duration`.
    private func stage(_ name: String, from end: UInt64, lasting duration: Duration,
                       _ attributes: [String: SpanAttribute], error: ImageKitError? = nil) {
        stage(name, start: Self.instant(end, before: duration), end: end, attributes, error: error)
    }

    /// Records a stage that ran from `start` to `end` (nanoseconds since the epoch), as a child
    /// of the load's span.
    private func stage(_ name: String, kind: SpanKind = .internal, start: UInt64, end: UInt64,
                       _ attributes: [String: SpanAttribute], error: ImageKitError? = nil) {
        let child = tracer.startSpan(name, context: span.context, ofKind: kind,
                                     at: DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: start))
        child.attributes = SpanAttributes(attributes)
        if let error {
            child.attributes["imagekit.error"] = error.kind
            child.recordError(error)
            child.setStatus(SpanStatus(code: .error, message: error.message))
        }
        child.end(at: DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: end))
    }

    /// The instant `duration` before `end` (nanoseconds since the epoch, never before it).
    private static func instant(_ end: UInt64, before duration: Duration) -> UInt64 {
        end - min(end, UInt64(clamping: max(0, duration.nanoseconds)))
    }
}
