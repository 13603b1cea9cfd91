/// The `async` call style's adapter: turns a task's deliveries into one resumption of the
/// awaiting caller, with the final result (for a refreshed load, the new one, or the cached
/// one when the server said it is current), the error, or ``ImageKitError/cancelled``.
/// `extract` picks what the caller asked for (the image, or the encoded bytes) out of it.
final class ImageTaskContinuation<Output: Sendable>: Sendable {
    typealias Extract = @Sendable (LoadResult) -> Result<Output, ImageKitError>

    private struct State: Sendable {
        var continuation: CheckedContinuation<Result<Output, ImageKitError>, Never>?
        /// The outcome, when it came before the continuation was installed.
        var outcome: Result<Output, ImageKitError>?
        var resumed = false
    }

    private let state = Locked(State())
    private let extract: Extract

    init(_ extract: @escaping Extract) {
        self.extract = extract
    }

    /// Installs the continuation; resumes it at once if the outcome is already known.
    func install(_ continuation: CheckedContinuation<Result<Output, ImageKitError>, Never>) {
        let outcome = state.withLock { s -> Result<Output, ImageKitError>? in
            guard let outcome = s.outcome else {
                s.continuation = continuation
                return nil
            }
            s.resumed = true
            return outcome
        }
        if let outcome { continuation.resume(returning: outcome) }
    }

    /// The task's sink.
    func receive(_ task: ImageTask, _ delivery: ImageTask.Delivery) {
        switch delivery {
        case .image(_, false):
            break
        case .image(let result, true):
            if task.claim(delivery) { resolve(extract(result)) }
        case .failure(let error):
            if task.claim(delivery) { resolve(.failure(error)) }
        case .notModified(let cached):
            if task.claim(.image(cached, isFinal: true)) { resolve(extract(cached)) }
        case .cancelled:
            resolve(.failure(.cancelled))
        }
    }

    private func resolve(_ outcome: Result<Output, ImageKitError>) {
        let continuation = state.withLock { s -> CheckedContinuation<Result<Output, ImageKitError>, Never>? in
            guard !s.resumed, s.outcome == nil else { return nil }
            guard let c = s.continuation else {
                s.outcome = outcome
                return nil
            }
            s.resumed = true
            s.continuation = nil
            return c
        }
        continuation?.resume(returning: outcome)
    }
}
