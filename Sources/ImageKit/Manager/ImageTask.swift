#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One load started by ``ImageManager/loadImage(with:options:context:progress:completed:)`` or
/// ``ImageManager/loadEncodedImage(with:as:options:context:progress:completed:)``: a handle to
/// cancel it.
///
/// The completion is called exactly once — twice only for a ``ImageOptions/refreshCached``
/// load whose cached image changed — and never once ``cancel()`` has been called.
/// Cancelling one of several coalesced loads leaves the others running; the shared download
/// and decode stop when no load is left on them.
public final class ImageTask: Sendable, Hashable {
    /// What the pipeline hands a load.
    enum Delivery: Sendable {
        /// An image; not final for the cached image of a refreshed load.
        case image(LoadResult, isFinal: Bool)
        case failure(ImageKitError)
        /// A refreshed load's cached image (delivered before) is still current: nothing more comes.
        case notModified(LoadResult)
        case cancelled
    }

    /// Receives the deliveries of a task (the call style's adapter).
    typealias Sink = @Sendable (ImageTask, Delivery) -> Void
    /// Receives download progress.
    typealias ProgressSink = @Sendable (ImageTask, DownloadProgress) -> Void
    /// Receives partial images (``ImageOptions/progressiveLoad``).
    typealias PartialSink = @Sendable (ImageTask, Image) -> Void

    private enum Phase: Sendable {
        case running
        /// The pipeline has handed over the final delivery; the caller has not received it yet.
        case delivering
        /// The caller received the final delivery.
        case finished
        case cancelled
    }

    /// What the task waits on.
    enum Work: Sendable {
        case none
        case job(ImageLoadJob)
        case task(Task<Void, Never>)
    }

    private struct State: Sendable {
        var phase = Phase.running
        var work = Work.none
        var timer: Task<Void, Never>?
        var hasCachedImage = false
    }

    /// A number identifying this load in ``ImageManagerEvent``s.
    public let id: UInt64
    /// The URL asked for (nil when none was given).
    public let url: URL?
    /// The load's options after the options processor.
    let options: ImageOptions
    /// When the load was asked for (MonotonicClock nanoseconds).
    let started: UInt64
    private let manager: ImageManager
    private let sink: Sink
    private let progressSink: ProgressSink?
    private let partialSink: PartialSink?
    /// The load's own observers (from the manager's load observer factories), told of its events
    /// and of the pipeline's while it waits on one.
    let loadObservers: [any ImageLoadObserver]
    private let state = Locked(State())

    init(id: UInt64, url: URL?, options: ImageOptions, started: UInt64, manager: ImageManager, sink: @escaping Sink,
         progress: ProgressSink?, partial: PartialSink? = nil, observers: [any ImageLoadObserver]) {
        self.id = id
        self.url = url
        self.options = options
        self.started = started
        self.manager = manager
        self.sink = sink
        progressSink = progress
        partialSink = partial
        loadObservers = observers
    }

    /// Cancels the load: its completion will not be called, and its share of the download and
    /// decode is given up. Does nothing once the completion has been called.
    public func cancel() {
        let taken = state.withLock { s -> (wasRunning: Bool, work: Work, timer: Task<Void, Never>?)? in
            switch s.phase {
            case .running, .delivering:
                defer {
                    s.phase = .cancelled
                    s.work = .none
                    s.timer = nil
                }
                return (s.phase == .running, s.work, s.timer)
            case .finished, .cancelled:
                return nil
            }
        }
        guard let taken else { return }
        taken.timer?.cancel()
        if taken.wasRunning {
            release(taken.work)
            manager.taskEnded(self)
        }
        manager.emit(.cancelled(task: id, url: url, duration: elapsed), to: loadObservers)
        for observer in loadObservers { observer.loadEnded() }
        sink(self, .cancelled)
    }

    /// Whether ``cancel()`` was called before the completion.
    public var isCancelled: Bool {
        state.withLock { if case .cancelled = $0.phase { true } else { false } }
    }

    /// Whether the completion has been called for the last time.
    public var isFinished: Bool {
        state.withLock { if case .finished = $0.phase { true } else { false } }
    }

    public static func == (a: ImageTask, b: ImageTask) -> Bool { a === b }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Pipeline side

    /// Whether the load still waits for its result.
    var isRunning: Bool {
        state.withLock { if case .running = $0.phase { true } else { false } }
    }

    /// Time since the load was asked for.
    var elapsed: Duration { MonotonicClock.duration(since: started) }

    /// Records what the task waits on; false (and nothing recorded) once it no longer runs.
    func setWork(_ work: Work) -> Bool {
        state.withLock { s in
            guard case .running = s.phase else { return false }
            s.work = work
            return true
        }
    }

    /// Fails the load with ``ImageKitError/deadlineExceeded(_:)`` at `deadline` unless it ends first.
    func arm(deadline: ContinuousClock.Instant) {
        let timer = manager.spawn { [weak self] in
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            self?.finish(.failure(.deadlineExceeded("the load's deadline passed")), detach: true)
        }
        let ended = state.withLock { s -> Bool in
            guard case .running = s.phase else { return true }
            s.timer = timer
            return false
        }
        if ended { timer.cancel() }
    }

    /// Ends the load with a final delivery (a final image, a failure or ``Delivery/notModified``);
    /// with `detach` it also gives up what it waited on. Ignored once the load has ended.
    func finish(_ delivery: Delivery, detach: Bool) {
        let taken = state.withLock { s -> (work: Work, timer: Task<Void, Never>?)? in
            guard case .running = s.phase else { return nil }
            defer {
                s.phase = .delivering
                s.work = .none
                s.timer = nil
            }
            return (s.work, s.timer)
        }
        guard let taken else { return }
        taken.timer?.cancel()
        if detach { release(taken.work) }
        manager.taskEnded(self)
        sink(self, stamped(delivery))
    }

    /// Hands a refreshed load its cached image; the load goes on. Ignored after the first.
    func deliverCached(_ result: LoadResult) {
        let first = state.withLock { s -> Bool in
            guard case .running = s.phase, !s.hasCachedImage else { return false }
            s.hasCachedImage = true
            return true
        }
        if first { sink(self, stamped(.image(result, isFinal: false))) }
    }

    /// Passes download progress on while the load runs.
    func progress(_ progress: DownloadProgress) {
        guard let progressSink, isRunning else { return }
        progressSink(self, progress)
    }

    /// Whether the load wants partial images (``ImageOptions/progressiveLoad`` with a handler).
    var wantsPartialImages: Bool { partialSink != nil }

    /// Passes a partial image on while the load runs.
    func partial(_ image: Image) {
        guard let partialSink, isRunning else { return }
        partialSink(self, image)
    }

    /// Called by the call style's adapter right before it hands `delivery` to the caller
    /// (on the callback queue, or when resuming the awaiting task): true when the caller may
    /// have it, false once the load was cancelled. A final delivery ends the load.
    func claim(_ delivery: Delivery) -> Bool {
        var isFinal = true
        if case .image(_, false) = delivery { isFinal = false }
        let granted = state.withLock { s -> Bool in
            if case .cancelled = s.phase { return false }
            if isFinal { s.phase = .finished }
            return true
        }
        guard granted else { return false }
        switch delivery {
        case .image(let result, _):
            manager.emit(.completed(task: id, url: result.url, source: result.source,
                                    duration: result.metrics.total), to: loadObservers)
        case .failure(let error):
            manager.emit(.failed(task: id, url: url, error: error, duration: elapsed), to: loadObservers)
        case .notModified, .cancelled:
            break
        }
        if isFinal {
            for observer in loadObservers { observer.loadEnded() }
        }
        return true
    }

    /// `delivery` with the load's total time filled in.
    private func stamped(_ delivery: Delivery) -> Delivery {
        switch delivery {
        case .image(var result, let isFinal):
            result.metrics.total = elapsed
            return .image(result, isFinal: isFinal)
        case .notModified(var result):
            result.metrics.total = elapsed
            return .notModified(result)
        case .failure, .cancelled:
            return delivery
        }
    }

    private func release(_ work: Work) {
        switch work {
        case .none: break
        case .job(let job): job.detach(self)
        case .task(let task): task.cancel()
        }
    }
}
