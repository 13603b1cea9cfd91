import CImageCore

extension ImageKitError {
    /// Builds the Swift error for a C status and its error value.
    init(status: ic_status, error: ic_error, format: ImageFormat = .unknown) {
        var err = error
        let message = withUnsafeBytes(of: &err.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let text = message.isEmpty ? String(cString: ic_status_name(status)) : message
        switch status {
        case IC_ERR_INVALID_ARGUMENT: self = .invalidArgument(text)
        case IC_ERR_UNKNOWN_FORMAT: self = .unknownFormat(text)
        case IC_ERR_UNSUPPORTED_FORMAT: self = .unsupportedFormat(format, text)
        case IC_ERR_UNSUPPORTED_FEATURE: self = .unsupportedFeature(text)
        case IC_ERR_LIMIT_EXCEEDED: self = .limitExceeded(text)
        case IC_ERR_CORRUPT: self = .corrupt(text)
        case IC_ERR_TRUNCATED: self = .truncated(text)
        case IC_ERR_OUT_OF_MEMORY: self = .outOfMemory(text)
        case IC_ERR_IO: self = .io(text)
        case IC_ERR_CANCELLED: self = .cancelled
        case IC_ERR_ENCODE: self = .encodeFailed(text)
        case IC_ERR_NO_SPACE: self = .noSpace(text)
        default: self = .internal(text)
        }
    }
}
