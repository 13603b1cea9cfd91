#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ImageKit
import Tracing

/// Traces an ``ImageKit/ImageManager``'s loads with swift-distributed-tracing: a span per load,
/// child of the span in the caller's task-local `ServiceContext`, with a child span per stage.
///
/// Add it to ``ImageKit/ImageManagerConfiguration/loadObserverFactories`` (or let
/// ``ImageKitObservability`` do it). Spans:
///
/// | span | kind | when | attributes |
/// |---|---|---|---|
/// | `imagekit.load` | internal | from the call to the load's end | `url.full`, `imagekit.task`, `imagekit.result` (`success`, `failure`, `cancelled`), `imagekit.cache.tier` (where the image came from: `memory`, `disk`, `network`), `imagekit.error`; the error is recorded on failure |
/// | `imagekit.cache.query` | internal | each lookup | `imagekit.cache.tier` (`memory`, `disk`, `original`), `imagekit.cache.hit`, `imagekit.cache.key` |
/// | `imagekit.download` | client | the transfer | `url.full`, `http.response.status_code`, `imagekit.download.bytes`, `imagekit.download.shared_by` |
/// | `imagekit.decode` | internal | decoding (and thumbnailing) | `imagekit.image.width`, `imagekit.image.height` |
/// | `imagekit.transform` | internal | the transformer | `imagekit.transformer` |
/// | `imagekit.encode` | internal | encoding the variant | `imagekit.image.format`, `imagekit.encoded.bytes` |
/// | `imagekit.store` | internal | a write to a cache tier | `imagekit.cache.tier` |
///
/// A failed stage's span records the error and has an error status. Loads that share a
/// pipeline each get the stages' spans from the moment they joined. A disk write the load does
/// not wait for comes after its end and is in no trace. Stage spans are recorded when the stage
/// ends, with the start and end it reports. With the no-op tracer (nothing bootstrapped) a
/// load makes nothing; when a load's span does not record (a trace sampled out), nothing else
/// is made for that load.
public struct ImageKitTracing: ImageLoadObserverFactory {
    private let tracer: any Tracer
    /// Whether ``tracer`` is the no-op tracer.
    private let isNoOp: Bool

    /// Spans from `tracer`, or (nil, the default) from `InstrumentationSystem.tracer` as it is
    /// now: bootstrap the instrumentation system first. (Looking it up on every load would
    /// cost more than the rest of a memory hit.)
    public init(tracer: (any Tracer)? = nil) {
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer
        isNoOp = tracer is NoOpTracer
    }

    /// Starts the load's span in the caller's context; nil when there is no tracer or the span
    /// does not record.
    public func makeObserver(task: UInt64, url: URL?) -> (any ImageLoadObserver)? {
        guard !isNoOp else { return nil }
        let span = tracer.startSpan("imagekit.load", context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        guard span.isRecording else {
            span.end()
            return nil
        }
        span.attributes["imagekit.task"] = Int64(truncatingIfNeeded: task)
        if let url { span.attributes["url.full"] = MessageURL.describe(url) }
        return ImageLoadSpan(span: span, tracer: tracer)
    }
}
