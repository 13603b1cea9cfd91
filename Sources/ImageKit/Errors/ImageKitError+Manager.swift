extension ImageKitError {
    /// Whether a failed load says something lasting about its URL, so that loading it again
    /// soon is pointless: it answers 4xx (other than 408 and 429), its data does not decode,
    /// its certificate is refused, and the like. Timeouts, connection and DNS failures, broken
    /// connections, 408/429/5xx answers, cancellation, deadlines, vetoes, cache-only misses and
    /// transformer failures (the transformer's fault, not the URL's) are not.
    public var isLastingLoadFailure: Bool {
        switch code {
        case .cancelled, .timedOut, .dnsFailed, .connectFailed, .network, .outOfMemory, .noSpace,
             .deadlineExceeded, .vetoed, .notInCache, .blocklisted, .transformFailed, .overloaded, .shutDown:
            false
        case .httpStatus:
            httpStatus.map { (400..<500).contains($0) && $0 != 408 && $0 != 429 } ?? false
        default:
            true
        }
    }

    /// `error` as an ImageKitError: itself, ``cancelled`` for a `CancellationError`, else an
    /// ``Code/internal`` error whose message describes `error` and whose ``underlying`` is `error`.
    ///
    /// - Parameter error: Any error, such as one thrown by your own code inside a call that
    ///   throws ImageKitError.
    public init(wrapping error: any Error) {
        if let e = error as? ImageKitError {
            self = e
        } else if error is CancellationError {
            self = .cancelled
        } else {
            self.init(code: .internal, message: "\(error)", underlying: error)
        }
    }
}
