import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The two call styles over one route: ``MemoryStage`` in the caller's context, then (for an
/// `async` load whose disk tier may answer) ``DiskReadStage`` inline in the caller's task,
/// then the pipeline (``launch(_:_:finalEntry:)``), which a completion-handler load reaches
/// straight after the memory stage and whose first stage is the same read.
extension ImageManager {
    /// The `async` call style over any output.
    func load<Output: Sendable>(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions,
                                _ context: ImageContext?, _ progress: (@Sendable (DownloadProgress) -> Void)?,
                                _ extract: @escaping ImageTaskContinuation<Output>.Extract)
        async throws(ImageKitError) -> Output {
        let started = MonotonicClock.now()
        if Task.isCancelled { throw ImageKitError.cancelled }
        let observed = observeLoad(url)
        let outcome = MemoryStage(manager: self).run(url, output, options, context, observed.observers)
        /// Ends the load in the caller's task, reporting `event` (given the load's id and duration).
        func end(_ event: (UInt64, Duration) -> ImageManagerEvent) -> Duration {
            let total = MonotonicClock.duration(since: started)
            emit(event(observed.id ?? makeID(), total), to: observed.observers)
            for observer in observed.observers { observer.loadEnded() }
            return total
        }
        var finalEntry = FinalEntryRead()
        switch outcome {
        case .hit(var result, _, _):
            result.metrics = ImageLoadMetrics(total: end { .completed(task: $0, url: result.url, source: .memory,
                                                                      duration: $1) })
            return try extract(result).get()
        case .failed(let url, let error):
            _ = end { .failed(task: $0, url: url, error: error, duration: $1) }
            throw error
        case .load(let plan) where DiskReadStage.applies(to: plan):
            switch await DiskReadStage(manager: self, plan: plan, loadObservers: observed.observers).run() {
            case .hit(var result):
                result.metrics.total = end { .completed(task: $0, url: result.url, source: result.source,
                                                        duration: $1) }
                return try extract(result).get()
            case .cancelled:
                _ = end { .cancelled(task: $0, url: url, duration: $1) }
                throw ImageKitError.cancelled
            case .miss(let read):
                finalEntry = read
            }
        default:
            break
        }
        let adapter = ImageTaskContinuation(extract)
        let queue = outcome.callbackQueue ?? context?.callbackQueue ?? configuration.callbackQueue
        let task = ImageTask(id: observed.id ?? makeID(), url: url, options: outcome.options, started: started,
                             manager: self, sink: adapter.receive, progress: Self.progressSink(progress, on: queue),
                             partial: Self.partialSink(outcome, on: queue),
                             observers: observed.observers)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                adapter.install(continuation)
                launch(task, outcome, finalEntry: finalEntry)
            }
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }

    /// The completion-handler call style over any output.
    func start<Output: Sendable>(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions,
                                 _ context: ImageContext?, _ progress: (@Sendable (DownloadProgress) -> Void)?,
                                 _ extract: @escaping ImageTaskContinuation<Output>.Extract,
                                 _ completed: @escaping @Sendable (Result<Output, ImageKitError>) -> Void)
        -> ImageTask {
        startTask(url, output, options, context, progress) { delivery in
            switch delivery {
            case .image(let result, _): completed(extract(result))
            case .failure(let error): completed(.failure(error))
            case .notModified, .cancelled: break
            }
        }
    }

    /// Starts a load whose deliveries go to `deliver` on the callback queue (the context's, else
    /// the configuration's), each once the caller may have it: images and failures, and the end
    /// of a refreshed load whose cached image is current (``ImageTask/Delivery/notModified``).
    func startTask(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions, _ context: ImageContext?,
                   _ progress: (@Sendable (DownloadProgress) -> Void)?,
                   _ deliver: @escaping @Sendable (ImageTask.Delivery) -> Void) -> ImageTask {
        let started = MonotonicClock.now()
        let observed = observeLoad(url)
        let outcome = MemoryStage(manager: self).run(url, output, options, context, observed.observers)
        let queue = outcome.callbackQueue ?? context?.callbackQueue ?? configuration.callbackQueue
        let sink: ImageTask.Sink = { task, delivery in
            switch delivery {
            case .image, .failure:
                queue.async { if task.claim(delivery) { deliver(delivery) } }
            case .notModified:
                if task.claim(delivery) { queue.async { deliver(delivery) } }
            case .cancelled:
                break
            }
        }
        let task = ImageTask(id: observed.id ?? makeID(), url: url, options: outcome.options, started: started,
                             manager: self, sink: sink, progress: Self.progressSink(progress, on: queue),
                             partial: Self.partialSink(outcome, on: queue), observers: observed.observers)
        launch(task, outcome)
        return task
    }

    /// The context's partial-image handler run on `queue` while its load runs, for a
    /// ``ImageOptions/progressiveLoad`` load that reaches a pipeline (both call styles).
    private static func partialSink(_ outcome: MemoryStage.Outcome, on queue: DispatchQueue) -> ImageTask.PartialSink? {
        let plan: LoadPlan
        switch outcome {
        case .load(let p), .memoryHit(let p, _): plan = p
        case .failed, .hit: return nil
        }
        guard plan.options.contains(.progressiveLoad), let handler = plan.context.partialImageHandler else {
            return nil
        }
        return { task, image in queue.async { if task.isRunning { handler(image) } } }
    }

    /// `progress` run on `queue` while its load runs (both call styles).
    private static func progressSink(_ progress: (@Sendable (DownloadProgress) -> Void)?,
                                     on queue: DispatchQueue) -> ImageTask.ProgressSink? {
        guard let progress else { return nil }
        return { task, value in queue.async { if task.isRunning { progress(value) } } }
    }
}
