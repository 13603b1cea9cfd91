import CImageCore

/// An `Int32` flag, raised and lowered from any thread, whose address the C decoders read with
/// atomic loads: a decode's cancellation (``DecodeCancellation``) and a worker pool's
/// helper-yield signal (``WorkerPool/helperYield``, `ic_decode_options.helper_yield_flag`).
final class AtomicFlag: Sendable {
    // nonisolated(unsafe): the pointer itself never changes after init. The Int32 it points
    // to is written only through ic_cancel_flag_set (an atomic release store) and read only
    // through ic_cancel_flag_get and the decoders' atomic acquire loads; it is freed in deinit,
    // and every decode that reads it holds a reference to this object (through its
    // DecodeCancellation).
    nonisolated(unsafe) private let flag: UnsafeMutablePointer<Int32>

    /// A flag that is not raised.
    init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit {
        flag.deallocate()
    }

    /// Raises (`true`) or lowers the flag.
    func set(_ raised: Bool) {
        ic_cancel_flag_set(flag, raised ? 1 : 0)
    }

    /// Whether the flag is raised.
    var isRaised: Bool {
        ic_cancel_flag_get(flag) != 0
    }

    /// The pointer to hand to the C decoders; valid while this object lives.
    var pointer: UnsafePointer<Int32> { UnsafePointer(flag) }
}
