#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A pipeline's decode of a body that streams in: the loader hands each piece to ``receive(_:)``
/// (on its own thread, the downloader's network thread for a download), which only queues it;
/// a job on the manager's worker threads feeds the queued pieces to the coder's
/// ``IncrementalImageDecoding`` decoder, one job at a time, and ``finish()`` waits for the last
/// piece to be fed and the decode to end.
///
/// The queue is bounded by the body: when decoding falls behind the network, pieces wait in it
/// (``peakQueuedBytes`` is the most bytes that waited at once). The coder is chosen from the
/// first ``sniffBytes`` bytes, as a whole-body decode chooses it from its first bytes.
final class StreamingDecode: Sendable {
    /// Bytes gathered before the coder is chosen (every signature the coders look at fits).
    static let sniffBytes = 64

    /// Who gets partial images, asked after each batch of pieces: nil when nobody wants them.
    typealias PartialSink = @Sendable (Image) -> Void

    private struct State: Sendable {
        var pending: [Data] = []
        var pendingBytes = 0
        var peakPendingBytes = 0
        /// A worker job is feeding (or is queued to feed) the pending pieces.
        var draining = false
        /// ``finish()`` was called: the input is complete.
        var ended = false
        var abandoned = false
        /// The first bytes, until the coder is chosen.
        var prefix = Data()
        var decoder: (any IncrementalImageDecoding)?
        var failure: ImageKitError?
        var waiter: CheckedContinuation<Result<Image, ImageKitError>, Never>?
        var lastPartial: UInt64 = 0
        /// Called once when the decode fails (``whenFailed(_:)``).
        var onFailure: (@Sendable () -> Void)?
        /// Time spent feeding and finishing, on the workers.
        var work: Duration = .zero
    }

    /// Whether the loader was asked to keep the whole body as well (to store it).
    let keepsBody: Bool
    private let coder: any ImageCoding
    private let options: DecodeOptions
    private let cancellation: DecodeCancellation
    private let workers: WorkerPool
    private let priority: ImagePriority
    private let interval: Duration
    private let partialSink: @Sendable () -> PartialSink?
    private let state = Locked(State())

    /// A decode through `coder` with `options`, stopped by `cancellation`, fed on `workers` at
    /// `priority`; `partialSink` is asked after each batch whether (and where) to hand a partial
    /// image, at most every `interval`.
    init(coder: any ImageCoding, options: DecodeOptions, cancellation: DecodeCancellation, workers: WorkerPool,
         priority: ImagePriority, keepsBody: Bool, interval: Duration,
         partialSink: @escaping @Sendable () -> PartialSink?) {
        self.coder = coder
        self.options = options
        self.cancellation = cancellation
        self.workers = workers
        self.priority = priority
        self.keepsBody = keepsBody
        self.interval = interval
        self.partialSink = partialSink
    }

    /// Queues the next piece of the body (any thread; returns at once).
    func receive(_ piece: Data) {
        guard !piece.isEmpty else { return }
        let schedule = state.withLock { s -> Bool in
            guard !s.abandoned, !s.ended, s.failure == nil else { return false }
            s.pending.append(piece)
            s.pendingBytes += piece.count
            s.peakPendingBytes = max(s.peakPendingBytes, s.pendingBytes)
            guard !s.draining else { return false }
            s.draining = true
            return true
        }
        if schedule { scheduleDrain() }
    }

    /// Ends the input (every piece was received) and returns the image once the decode is done,
    /// with the time the decode spent on the workers.
    func finish() async throws(ImageKitError) -> (Image, Duration) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Image, ImageKitError>, Never>) in
            let schedule = state.withLock { s -> Bool in
                s.waiter = continuation
                s.ended = true
                guard !s.draining else { return false }
                s.draining = true
                return true
            }
            if schedule { scheduleDrain() }
        }
        let work = state.withLock { $0.work }
        return (try result.get(), work)
    }

    /// Gives the decode up (the load failed or was cancelled): queued pieces are dropped and
    /// nothing more is fed.
    func abandon() {
        state.withLock { s in
            s.abandoned = true
            s.pending = []
            s.pendingBytes = 0
        }
    }

    /// The most bytes that waited in the queue at once.
    var peakQueuedBytes: Int { state.withLock { $0.peakPendingBytes } }

    /// The decode's error once a piece failed it (the rest of the body would change nothing).
    var failure: ImageKitError? { state.withLock { $0.failure } }

    /// Calls `handler` once, on the worker thread that finds the decode failed, or at once when
    /// it has failed already: the load stops its download there rather than after the last byte.
    func whenFailed(_ handler: @escaping @Sendable () -> Void) {
        let failed = state.withLock { s -> Bool in
            guard s.failure == nil else { return true }
            s.onFailure = handler
            return false
        }
        if failed { handler() }
    }

    // MARK: - On the workers

    private func scheduleDrain() {
        guard !workers.submit(priority: priority, { [self] in drain() }) else { return }
        let waiter = state.withLock { s -> CheckedContinuation<Result<Image, ImageKitError>, Never>? in
            s.failure = s.failure ?? .shutDown("the image manager's worker threads were shut down")
            s.draining = false
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: .failure(.shutDown("the image manager's worker threads were shut down")))
    }

    private enum Step {
        case feed([Data])
        case finish(CheckedContinuation<Result<Image, ImageKitError>, Never>)
        case stop
    }

    /// Feeds the queued pieces until none is left; once the input has ended, finishes.
    private func drain() {
        while true {
            let step = state.withLock { s -> Step in
                if s.abandoned || s.failure != nil {
                    s.pending = []
                    s.pendingBytes = 0
                }
                if !s.pending.isEmpty {
                    defer {
                        s.pending = []
                        s.pendingBytes = 0
                    }
                    return .feed(s.pending)
                }
                if s.ended, let waiter = s.waiter {
                    s.waiter = nil
                    s.draining = false
                    return .finish(waiter)
                }
                s.draining = false
                return .stop
            }
            switch step {
            case .feed(let pieces):
                feed(pieces)
            case .finish(let waiter):
                waiter.resume(returning: finishDecode())
                return
            case .stop:
                return
            }
        }
    }

    /// Feeds `pieces`, choosing the coder once the first bytes are in; records a failure.
    private func feed(_ pieces: [Data]) {
        let start = MonotonicClock.now()
        defer { state.withLock { $0.work += MonotonicClock.duration(since: start) } }
        do {
            var (decoder, prefix) = state.withLock { ($0.decoder, $0.prefix) }
            for piece in pieces {
                if let decoder {
                    try decoder.feed(piece)
                    continue
                }
                prefix.append(piece)
                guard prefix.count >= Self.sniffBytes else { continue }
                let made = try coder.makeIncrementalDecoder(for: prefix, options: options, cancellation: cancellation)
                try made.feed(prefix)
                decoder = made
                prefix = Data()
            }
            state.withLock { s in
                s.decoder = decoder
                s.prefix = prefix
            }
            if let decoder { offerPartial(decoder) }
        } catch {
            let handler = state.withLock { s -> (@Sendable () -> Void)? in
                s.failure = ImageKitError(wrapping: error)
                defer { s.onFailure = nil }
                return s.onFailure
            }
            handler?()
        }
    }

    /// Hands a partial image to whoever wants one, when the interval has passed since the last.
    private func offerPartial(_ decoder: any IncrementalImageDecoding) {
        guard let sink = partialSink() else { return }
        let now = MonotonicClock.now()
        let due = state.withLock { s -> Bool in
            guard s.lastPartial == 0 || Duration.nanoseconds(Int64(clamping: now &- s.lastPartial)) >= interval else {
                return false
            }
            s.lastPartial = now
            return true
        }
        guard due, let image = try? decoder.partialImage() else { return }
        sink(image)
    }

    /// The end of the decode: the error recorded, or the decoder's image (a body shorter than
    /// the sniffed prefix is decoded whole here).
    private func finishDecode() -> Result<Image, ImageKitError> {
        let start = MonotonicClock.now()
        defer { state.withLock { $0.work += MonotonicClock.duration(since: start) } }
        let (failure, decoder, prefix, abandoned) = state.withLock { s in
            defer {
                s.decoder = nil
                s.prefix = Data()
            }
            return (s.failure, s.decoder, s.prefix, s.abandoned)
        }
        if let failure { return .failure(failure) }
        if abandoned { return .failure(.cancelled) }
        do {
            if let decoder { return .success(try decoder.finish()) }
            let made = try coder.makeIncrementalDecoder(for: prefix, options: options, cancellation: cancellation)
            if !prefix.isEmpty { try made.feed(prefix) }
            return .success(try made.finish())
        } catch {
            return .failure(ImageKitError(wrapping: error))
        }
    }
}
