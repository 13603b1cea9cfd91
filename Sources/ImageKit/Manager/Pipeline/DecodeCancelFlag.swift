import CImageCore

/// The flag a running decode polls (`ic_decode_options.cancel_flag`): setting it makes
/// the decoder stop at its next check with ``ImageKitError/cancelled``.
final class DecodeCancelFlag: Sendable {
    // nonisolated(unsafe): the pointer itself never changes after init. The Int32 it points
    // to is written only through ic_cancel_flag_set (an atomic release store) and read only by
    // the decoder's atomic acquire load; it is freed in deinit, and every decode that reads it
    // holds a reference to this object.
    nonisolated(unsafe) private let flag: UnsafeMutablePointer<Int32>

    init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit {
        flag.deallocate()
    }

    /// Asks the decode to stop.
    func set() {
        ic_cancel_flag_set(flag, 1)
    }

    /// The pointer to hand to the decoder; valid while this object lives.
    var pointer: UnsafePointer<Int32> { UnsafePointer(flag) }
}
