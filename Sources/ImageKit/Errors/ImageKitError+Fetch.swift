import CImageCore

extension ImageKitError {
    /// The error for a failed transfer's result code and sentence.
    init(fetch result: ic_fetch_result, curlCode: Int32, message: String, status: Int) {
        switch result {
        case IC_FETCH_CANCELLED: self = .cancelled
        case IC_FETCH_TIMEOUT: self = .timedOut(message)
        case IC_FETCH_DNS: self = .dnsFailed(message)
        case IC_FETCH_CONNECT: self = .connectFailed(message)
        case IC_FETCH_TLS: self = .tlsFailed(message)
        case IC_FETCH_TOO_LARGE: self = .responseTooLarge(message)
        case IC_FETCH_TOO_MANY_REDIRECTS: self = .tooManyRedirects(message)
        case IC_FETCH_DISALLOWED_PROTOCOL: self = .disallowedProtocol(message)
        case IC_FETCH_HTTP_STATUS: self = .httpStatus(status, message)
        case IC_FETCH_NETWORK: self = .network(message)
        case IC_FETCH_BAD_URL: self = .invalidURL(message)
        case IC_FETCH_ABORTED: self = .invalidResponse(message)
        case IC_FETCH_DESTINATION_REFUSED: self = .destinationRefused(message)
        default: self = .transferFailed(curlCode: Int(curlCode), message)
        }
    }
}
