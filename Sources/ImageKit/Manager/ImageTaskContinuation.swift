/// The `async` call style's adapter: turns a task's deliveries into one resumption of the
/// awaiting caller, with the final image (for a refreshed load, the new image, or the cached
/// one when the server said it is current), the error, or ``ImageKitError/cancelled``.
final class ImageTaskContinuation: Sendable {
    private struct State: Sendable {
        var continuation: CheckedContinuation<ImageResult, any Error>?
        /// The outcome, when it came before the continuation was installed.
        var outcome: Result<ImageResult, ImageKitError>?
        var resumed = false
    }

    private let state = Locked(State())

    /// Installs the continuation; resumes it at once if the outcome is already known.
    func install(_ continuation: CheckedContinuation<ImageResult, any Error>) {
        let outcome = state.withLock { s -> Result<ImageResult, ImageKitError>? in
            guard let outcome = s.outcome else {
                s.continuation = continuation
                return nil
            }
            s.resumed = true
            return outcome
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// The task's sink.
    func receive(_ task: ImageTask, _ delivery: ImageTask.Delivery) {
        switch delivery {
        case .image(_, false):
            break
        case .image(let result, true):
            if task.claim(delivery) { resolve(.success(result)) }
        case .failure(let error):
            if task.claim(delivery) { resolve(.failure(error)) }
        case .notModified(let cached):
            if task.claim(.image(cached, isFinal: true)) { resolve(.success(cached)) }
        case .cancelled:
            resolve(.failure(.cancelled))
        }
    }

    private func resolve(_ outcome: Result<ImageResult, ImageKitError>) {
        let continuation = state.withLock { s -> CheckedContinuation<ImageResult, any Error>? in
            guard !s.resumed, s.outcome == nil else { return nil }
            guard let c = s.continuation else {
                s.outcome = outcome
                return nil
            }
            s.resumed = true
            s.continuation = nil
            return c
        }
        continuation?.resume(with: outcome)
    }
}
