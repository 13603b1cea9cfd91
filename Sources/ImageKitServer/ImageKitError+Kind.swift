import ImageKit

extension ImageKitError {
    /// The failure's kind in one snake-case word (`http_status`, `timed_out`, `corrupt`, …): the
    /// `error` dimension of ``ImageKitMetricName/loadFailures`` and the `imagekit.error` log
    /// metadata. One per case, so a new case must be named here.
    var kind: String {
        switch self {
        case .invalidArgument: "invalid_argument"
        case .unknownFormat: "unknown_format"
        case .unsupportedFormat: "unsupported_format"
        case .unsupportedFeature: "unsupported_feature"
        case .limitExceeded: "limit_exceeded"
        case .corrupt: "corrupt"
        case .truncated: "truncated"
        case .outOfMemory: "out_of_memory"
        case .io: "io"
        case .cancelled: "cancelled"
        case .encodeFailed: "encode_failed"
        case .noSpace: "no_space"
        case .internal: "internal"
        case .httpStatus: "http_status"
        case .network: "network"
        case .timedOut: "timed_out"
        case .dnsFailed: "dns_failed"
        case .connectFailed: "connect_failed"
        case .tlsFailed: "tls_failed"
        case .responseTooLarge: "response_too_large"
        case .tooManyRedirects: "too_many_redirects"
        case .disallowedProtocol: "disallowed_protocol"
        case .destinationRefused: "destination_refused"
        case .invalidURL: "invalid_url"
        case .unacceptableContentType: "unacceptable_content_type"
        case .invalidResponse: "invalid_response"
        case .transferFailed: "transfer_failed"
        case .blocklisted: "blocklisted"
        case .notInCache: "not_in_cache"
        case .deadlineExceeded: "deadline_exceeded"
        case .vetoed: "vetoed"
        case .transformFailed: "transform_failed"
        case .overloaded: "overloaded"
        case .shutDown: "shut_down"
        }
    }

    /// Whether the failure is a fault of the machine itself — a disk or memory failure, or a
    /// bug — rather than of the image or its origin: logged as an error.
    var isLocalFault: Bool {
        switch self {
        case .io, .noSpace, .outOfMemory, .internal: true
        default: false
        }
    }
}
