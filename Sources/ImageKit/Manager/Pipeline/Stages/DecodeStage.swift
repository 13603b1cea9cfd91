#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns bytes into the load's image on the manager's worker threads: the decode through the
/// load's coder (stopped once the pipeline's ``DecodeCancellation`` is cancelled), or the end
/// of the decode that took the body as it streamed in, then the load's transformer.
struct DecodeStage: Sendable {
    let job: ImageLoadJob

    /// The image made from what the loader brought, with its validators and (unless a streamed
    /// body was not kept) the bytes; nil when the pipeline ended (failed or cancelled).
    func run(_ fetched: Fetched, _ metrics: inout ImageLoadMetrics) async -> Found? {
        do {
            let processed: Processed
            if let streaming = fetched.streaming {
                processed = try await processStreamed(streaming)
                metrics.streamQueuePeakBytes = streaming.peakQueuedBytes
            } else {
                processed = try await process(fetched.data)
            }
            guard !Task.isCancelled else { return nil }
            metrics.decode = processed.decode
            metrics.transform = processed.transform
            var metadata = DiskCacheMetadata()
            metadata.etag = fetched.response?.entityTag
            metadata.lastModified = fetched.response?.lastModified
            // A streamed body that was not kept is nowhere: the result carries no original bytes.
            let original = fetched.streaming.map { $0.keepsBody } ?? true ? fetched.data : nil
            return Found(image: processed.image, metadata: metadata, originalData: original, downloaded: true)
        } catch {
            job.fail(ImageKitError(wrapping: error))
            return nil
        }
    }

    /// Decodes and transforms `data` on the worker threads.
    func process(_ data: Data) async throws -> Processed {
        do {
            return try await job.manager.workers.run(priority: job.plan.priority) { [self] in
                try decodeAndTransform(data)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// Ends a streamed decode and transforms its image on the worker threads. Its events come
    /// once the body is in: `decodeStarted`, then `decoded` with the time the decode spent on
    /// the workers over the whole stream.
    private func processStreamed(_ streaming: StreamingDecode) async throws -> Processed {
        let plan = job.plan
        job.emit(.decodeStarted(url: plan.url, key: plan.key))
        let start = MonotonicClock.now()
        let image: Image
        let decode: Duration
        do {
            (image, decode) = try await streaming.finish()
        } catch {
            // The time from the end of the body to the failure: what the load waited for it.
            job.emit(.decodeFailed(url: plan.url, key: plan.key, error: error,
                                   duration: MonotonicClock.duration(since: start)))
            throw error
        }
        job.emit(.decoded(url: plan.url, key: plan.key, size: PixelSize(width: image.width, height: image.height),
                          duration: decode))
        do {
            return try await job.manager.workers.run(priority: plan.priority) { [self] in
                try transform(image, decode: decode)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// The decode through the load's coder and the transform; runs on a worker thread.
    private func decodeAndTransform(_ data: Data) throws -> Processed {
        let plan = job.plan
        job.emit(.decodeStarted(url: plan.url, key: plan.key))
        let start = MonotonicClock.now()
        let image: Image
        do {
            var options = plan.decodeOptions
            if job.manager.configuration.decodeHelperThreadWhenIdle, job.manager.workers.offersSecondCore {
                options.usesHelperThread = true
            }
            image = try plan.coder.decode(data, options: options, cancellation: job.cancellation)
        } catch {
            let e = ImageKitError(wrapping: error)
            job.emit(.decodeFailed(url: plan.url, key: plan.key, error: e,
                                   duration: MonotonicClock.duration(since: start)))
            throw e
        }
        let decode = MonotonicClock.duration(since: start)
        job.emit(.decoded(url: plan.url, key: plan.key, size: PixelSize(width: image.width, height: image.height),
                          duration: decode))
        return try transform(image, decode: decode)
    }

    /// `image` through the load's transformer, if it has one for it; runs on a worker thread.
    private func transform(_ image: Image, decode: Duration) throws -> Processed {
        let plan = job.plan
        guard let transformer = plan.transformer(for: image) else {
            return Processed(image: image, decode: decode)
        }
        let transformStart = MonotonicClock.now()
        do {
            let transformed = try transformer.transform(image, stoppingOn: job.cancellation)
            let transform = MonotonicClock.duration(since: transformStart)
            job.emit(.transformed(url: plan.url, key: plan.key, transformer: transformer.key, duration: transform,
                                  error: nil))
            return Processed(image: transformed, decode: decode, transform: transform)
        } catch {
            // Stopped because nobody waits any more: a cancellation, not a failed transform.
            let e = job.cancellation.isCancelled
                ? ImageKitError.cancelled
                : ImageKitError(code: .transformFailed, message: "\(transformer.key): \(error)", underlying: error)
            job.emit(.transformed(url: plan.url, key: plan.key, transformer: transformer.key,
                                  duration: MonotonicClock.duration(since: transformStart), error: e))
            throw e
        }
    }
}
