/// Turns for the pipelines that hold bytes: a download body, a decoded image, an encoding.
///
/// A pipeline asks for a turn before it downloads (or reads original bytes to decode) and
/// gives it back when its result exists, so the bodies and bitmaps alive at once follow the
/// limit, not the arrival rate: a load waiting for a turn holds nothing but its request. Turns
/// go highest priority first, in arrival order within a priority. Past `maxWaiting` waiting
/// pipelines, more fail at once with ``ImageKitError/overloaded(_:)`` (load shedding).
final class PipelineLimiter: Sendable {
    private struct Waiter: Sendable {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var available: Int
        /// Per priority (low, normal, high), oldest first.
        var waiting: [[Waiter]] = [[], [], []]
        /// Waiters counted in, whose continuation is not installed yet.
        var arriving: Set<UInt64> = []
        /// Of those, the ones already cancelled.
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0

        var waitingCount: Int { waiting.reduce(0) { $0 + $1.count } + arriving.count }
    }

    let limit: Int
    let maxWaiting: Int?
    private let state: Locked<State>

    init(limit: Int, maxWaiting: Int?) {
        self.limit = max(1, limit)
        self.maxWaiting = maxWaiting
        state = Locked(State(available: max(1, limit)))
    }

    /// Pipelines holding a turn, and pipelines waiting for one.
    var counts: (active: Int, waiting: Int) {
        state.withLock { (limit - $0.available, $0.waitingCount) }
    }

    /// Waits for a turn; the caller must ``release()`` it.
    ///
    /// - Throws: ``ImageKitError/cancelled`` when the task is cancelled while waiting,
    ///   ``ImageKitError/overloaded(_:)`` when too many pipelines wait already.
    func acquire(priority: ImagePriority) async throws {
        enum Entry { case granted, wait(UInt64), refused(Int) }
        let entry = state.withLock { s -> Entry in
            if s.available > 0 {
                s.available -= 1
                return .granted
            }
            if let maxWaiting, s.waitingCount >= maxWaiting { return .refused(s.waitingCount) }
            s.nextID += 1
            s.arriving.insert(s.nextID)
            return .wait(s.nextID)
        }
        switch entry {
        case .granted:
            return
        case .refused(let waiting):
            throw ImageKitError.overloaded("\(limit) loads are downloading or decoding and \(waiting) are waiting "
                + "for a turn, the most the manager's maxWaitingPipelines allows")
        case .wait(let id):
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let cancelled = state.withLock { s -> Bool in
                        s.arriving.remove(id)
                        if s.cancelledEarly.remove(id) != nil { return true }
                        s.waiting[priority.rawValue].append(Waiter(id: id, continuation: continuation))
                        return false
                    }
                    if cancelled { continuation.resume(throwing: ImageKitError.cancelled) }
                }
            } onCancel: {
                let waiter = state.withLock { s -> Waiter? in
                    for p in 0..<3 {
                        if let i = s.waiting[p].firstIndex(where: { $0.id == id }) { return s.waiting[p].remove(at: i) }
                    }
                    // Not installed yet: it fails as it arrives. Already granted: nothing to do.
                    if s.arriving.contains(id) { s.cancelledEarly.insert(id) }
                    return nil
                }
                waiter?.continuation.resume(throwing: ImageKitError.cancelled)
            }
        }
    }

    /// Gives a turn back: to the next waiting pipeline, if any.
    func release() {
        let next = state.withLock { s -> Waiter? in
            for p in stride(from: 2, through: 0, by: -1) where !s.waiting[p].isEmpty {
                return s.waiting[p].removeFirst()
            }
            s.available += 1
            return nil
        }
        next?.continuation.resume()
    }
}
