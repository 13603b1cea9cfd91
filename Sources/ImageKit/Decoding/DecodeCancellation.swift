import CImageCore

/// The signal that tells a running decode to stop: ``ImageManager`` cancels it when the last
/// load waiting on a decode goes away, and an ``ImageCoding`` coder polls ``isCancelled``
/// between steps of its work (the built-in coder hands it to the C decoders, which check it
/// between rows and frames and stop with ``ImageKitError/cancelled``).
///
/// ```swift
/// for row in 0..<height {
///     if cancellation.isCancelled { throw ImageKitError.cancelled }
///     // decode the row
/// }
/// ```
public final class DecodeCancellation: Sendable {
    private let flag = AtomicFlag()
    /// For the manager's decodes: its worker pool's signal that another job runs or waits
    /// (the decode's helper thread then gives repeated work back); nil for a caller's own.
    let helperYield: AtomicFlag?

    /// A signal that is not cancelled yet.
    public init() {
        helperYield = nil
    }

    /// A signal that is not cancelled yet, carrying a worker pool's `helperYield`.
    init(helperYield: AtomicFlag) {
        self.helperYield = helperYield
    }

    /// Asks the decode to stop; it cannot be undone.
    public func cancel() {
        flag.set(true)
    }

    /// Whether ``cancel()`` was called: a decode seeing `true` should throw
    /// ``ImageKitError/cancelled`` soon.
    public var isCancelled: Bool {
        flag.isRaised
    }

    /// The pointer to hand to the C decoders; valid while this object lives.
    var pointer: UnsafePointer<Int32> { flag.pointer }
}
