import CImageCore

/// A flag a ``WorkerPool`` raises while more than one of its jobs runs or waits, read by the
/// decodes it gave a helper thread as a lone job (`ic_decode_options.helper_yield_flag`): a
/// helper whose work repeats the caller's (a JPEG's band, while it skips the rows above)
/// gives its rows back once another job needs the core.
final class HelperYieldSignal: Sendable {
    // nonisolated(unsafe): the pointer itself never changes after init. The Int32 it points
    // to is written only through ic_cancel_flag_set (an atomic release store) and read only
    // through ic_cancel_flag_get and the decoders' atomic acquire loads; it is freed in deinit,
    // and every decode that reads it holds a reference to this object (through its
    // DecodeCancellation).
    nonisolated(unsafe) private let flag: UnsafeMutablePointer<Int32>

    /// A signal that is not raised.
    init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit {
        flag.deallocate()
    }

    /// Raises (`true`) or lowers the signal.
    func set(_ raised: Bool) {
        ic_cancel_flag_set(flag, raised ? 1 : 0)
    }

    /// Whether the signal is raised.
    var isRaised: Bool {
        ic_cancel_flag_get(flag) != 0
    }

    /// The pointer to hand to the C decoders; valid while this object lives.
    var pointer: UnsafePointer<Int32> { UnsafePointer(flag) }
}
