/// Runs operations at once and returns with the first non-nil answer, without waiting for the
/// others: they are cancelled and their answers dropped when they come. (A task group would
/// wait for every child, so one slow cache would hold the answer a fast one already gave.)
enum FirstAnswer {
    private struct State<T: Sendable>: Sendable {
        var continuation: CheckedContinuation<(index: Int, value: T)?, any Error>?
        var tasks: [Task<Void, Never>] = []
        var remaining: Int
        var firstError: (any Error)?
        var done = false
    }

    /// The index and answer of the first of `operations` to answer non-nil; nil when all
    /// answered nil. A failing operation counts as a nil answer, and its error is thrown when
    /// no operation answered non-nil. Cancelling the caller cancels every operation.
    static func race<T: Sendable>(_ operations: [@Sendable () async throws -> T?]) async throws
        -> (index: Int, value: T)? {
        guard !operations.isEmpty else { return nil }
        let state = Locked(State<T>(remaining: operations.count))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { $0.continuation = continuation }
                for (index, operation) in operations.enumerated() {
                    let task = Task {
                        let result: Result<T?, any Error>
                        do { result = .success(try await operation()) } catch { result = .failure(error) }
                        finish(state, index, result)
                    }
                    let cancel = state.withLock { s -> Bool in
                        s.tasks.append(task)
                        return s.done
                    }
                    // Cancelled before the task was recorded: the cancellation handler missed it.
                    if cancel || Task.isCancelled { task.cancel() }
                }
            }
        } onCancel: {
            for task in state.withLock({ $0.tasks }) { task.cancel() }
        }
    }

    /// Records operation `index`'s result; resumes the caller at the first answer or after the
    /// last operation, cancelling the others at the first answer.
    private static func finish<T: Sendable>(_ state: Locked<State<T>>, _ index: Int, _ result: Result<T?, any Error>) {
        let (continuation, outcome, others) = state.withLock { s
            -> (CheckedContinuation<(index: Int, value: T)?, any Error>?, Result<(index: Int, value: T)?, any Error>?,
                [Task<Void, Never>]) in
            s.remaining -= 1
            guard !s.done else { return (nil, nil, []) }
            switch result {
            case .success(let value?):
                s.done = true
                defer { s.continuation = nil }
                return (s.continuation, .success((index, value)), s.tasks)
            case .success(nil):
                break
            case .failure(let error):
                s.firstError = s.firstError ?? error
            }
            guard s.remaining == 0 else { return (nil, nil, []) }
            s.done = true
            defer { s.continuation = nil }
            return (s.continuation, s.firstError.map { .failure($0) } ?? .success(nil), [])
        }
        for task in others { task.cancel() }
        if let continuation, let outcome { continuation.resume(with: outcome) }
    }
}
