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
    // nonisolated(unsafe): the pointer itself never changes after init. The Int32 it points
    // to is written only through ic_cancel_flag_set (an atomic release store) and read only
    // through ic_cancel_flag_get and the decoders' atomic acquire loads; it is freed in deinit,
    // and every decode that reads it holds a reference to this object.
    nonisolated(unsafe) private let flag: UnsafeMutablePointer<Int32>
    /// For the manager's decodes: its worker pool's signal that another job runs or waits
    /// (the decode's helper thread then gives repeated work back); nil for a caller's own.
    let helperYield: HelperYieldSignal?

    /// A signal that is not cancelled yet.
    public init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
        helperYield = nil
    }

    /// A signal that is not cancelled yet, carrying a worker pool's `helperYield`.
    init(helperYield: HelperYieldSignal) {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
        self.helperYield = helperYield
    }

    deinit {
        flag.deallocate()
    }

    /// Asks the decode to stop; it cannot be undone.
    public func cancel() {
        ic_cancel_flag_set(flag, 1)
    }

    /// Whether ``cancel()`` was called: a decode seeing `true` should throw
    /// ``ImageKitError/cancelled`` soon.
    public var isCancelled: Bool {
        ic_cancel_flag_get(flag) != 0
    }

    /// The pointer to hand to the C decoders; valid while this object lives.
    var pointer: UnsafePointer<Int32> { UnsafePointer(flag) }
}
