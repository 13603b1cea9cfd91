#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Brings the load's bytes through its loader (conditionally, for a refreshed load), checks
/// the response with the context's validator, and — when the loader streams
/// (``ImageStreamingLoading``) and nothing needs the whole body first — decodes the body as it
/// arrives (``StreamingDecode``), stopping the download as soon as that decode fails.
struct FetchStage: Sendable {
    let job: ImageLoadJob

    /// What the loader brought; nil when the pipeline ended (failed or cancelled).
    func run(validators: DownloadRequest.Validators?, _ metrics: inout ImageLoadMetrics) async -> Fetched? {
        let plan = job.plan
        let streaming = streamingDecode(validators: validators)
        var fetched: Fetched
        do {
            fetched = try await fetchUntilDecodeFails(validators: validators, streaming: streaming)
            if let validator = plan.context.responseValidator, let response = fetched.response {
                do {
                    try validator(response)
                } catch {
                    throw error as? ImageKitError
                        ?? ImageKitError(code: .invalidResponse,
                                         message: "the response validator rejected "
                                             + "\(MessageURL.describe(plan.url)): \(error)",
                                         underlying: error)
                }
            }
        } catch {
            streaming?.abandon()
            if let failure = streaming?.failure, !Task.isCancelled {
                // The decode failed first (a header over the limits, corrupt data) and stopped the
                // download: the load fails with the decode's error.
                job.emit(.decodeFailed(url: plan.url, key: plan.key, error: failure, duration: .zero))
                job.fail(failure)
                return nil
            }
            job.fail(ImageKitError(wrapping: error))
            return nil
        }
        guard !Task.isCancelled else {
            streaming?.abandon()
            return nil
        }
        metrics.download = fetched.metrics
        fetched.streaming = streaming
        return fetched
    }

    /// The decode that takes the body as it streams in, or nil when the body is decoded whole:
    /// streaming is off, the loader does not stream this URL, or the load revalidates a cached
    /// copy (a 304 has no body to decode, and today's path keeps what it found).
    private func streamingDecode(validators: DownloadRequest.Validators?) -> StreamingDecode? {
        let plan = job.plan
        let manager = job.manager
        guard manager.configuration.streamsDecoding, validators == nil,
              let loader = plan.loader as? any ImageStreamingLoading, loader.streamsBody(of: plan.url) else {
            return nil
        }
        return StreamingDecode(coder: plan.coder, options: plan.decodeOptions, cancellation: job.cancellation,
                               workers: manager.workers, priority: plan.priority, keepsBody: plan.storesOriginalData,
                               interval: plan.context.progressiveInterval) { [weak job = self.job] in
            job?.partialSink()
        }
    }

    /// ``fetch(validators:streaming:)``, cancelled as soon as the streamed decode fails: the
    /// rest of the body could not change the outcome, so a file refused on its header (an
    /// image over the limits) costs its first bytes, not the whole download. A transfer that
    /// other loads share goes on for them (cancelling one waiter cancels only its share).
    private func fetchUntilDecodeFails(validators: DownloadRequest.Validators?,
                                       streaming: StreamingDecode?) async throws -> Fetched {
        guard let streaming else { return try await fetch(validators: validators, streaming: nil) }
        let transfer = Task { try await self.fetch(validators: validators, streaming: streaming) }
        streaming.whenFailed { transfer.cancel() }
        return try await withTaskCancellationHandler {
            try await transfer.value
        } onCancel: {
            transfer.cancel()
        }
    }

    /// Loads the URL's bytes (conditionally with `validators`) through the plan's loader;
    /// with `streaming`, hands them to it as they arrive.
    private func fetch(validators: DownloadRequest.Validators?, streaming: StreamingDecode?) async throws -> Fetched {
        let plan = job.plan
        guard plan.loader.canLoad(plan.url) else {
            throw ImageKitError.invalidURL("the image loader does not load \(MessageURL.describe(plan.url))")
        }
        job.emit(.downloadStarted(url: plan.url))
        let start = MonotonicClock.now()
        do {
            let request = plan.loaderRequest(validators: validators)
            let progress: @Sendable (DownloadProgress) -> Void = { [weak job = self.job] p in job?.progress(p) }
            let result: ImageLoaderResult
            if let streaming, let loader = plan.loader as? any ImageStreamingLoading {
                result = try await loader.load(request, keepingData: streaming.keepsBody, progress: progress) { piece in
                    streaming.receive(piece)
                }
            } else {
                result = try await plan.loader.load(request, progress: progress)
            }
            if let response = result.response, let metrics = result.metrics {
                job.emit(.downloadFinished(url: plan.url, response: response, metrics: metrics))
            }
            return Fetched(data: result.data, status: result.status, response: result.response,
                           metrics: result.metrics)
        } catch {
            let e = ImageKitError(wrapping: error)
            job.emit(.downloadFailed(url: plan.url, error: e, duration: MonotonicClock.duration(since: start)))
            throw e
        }
    }
}
