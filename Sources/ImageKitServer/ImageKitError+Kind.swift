import ImageKit

extension ImageKitError {
    /// The failure's kind in one snake-case word (`http_status`, `timed_out`, `corrupt`, …): the
    /// `error` dimension of ``ImageKitMetricName/loadFailures`` and the `imagekit.error` log
    /// metadata. The code's stable ``ImageKitError/Code/name``.
    var kind: String { code.name }

    /// Whether the failure is a fault of the machine itself — a disk or memory failure, or a
    /// bug — rather than of the image or its origin: logged as an error.
    var isLocalFault: Bool {
        switch code {
        case .io, .noSpace, .outOfMemory, .internal: true
        default: false
        }
    }
}
