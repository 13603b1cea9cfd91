extension ImageKitError {
    /// A sentence a service can answer its client with: made from ``code`` and
    /// ``httpStatus-swift.property`` only, so it never holds a URL, a host, an address or
    /// anything the origin or the network said.
    ///
    /// ``message`` is for the operator: it names the origin's URL (its user part and secret
    /// query values removed, see ``MessageURL``), the internal address a policy refused, the
    /// decoder's byte offset. A thumbnail service that fetches from internal origins answers
    /// with ``suggestedHTTPStatus`` and this sentence, and logs ``message``:
    ///
    /// ```swift
    /// } catch {
    ///     logger.warning("load failed", metadata: ["error": "\(error.message)"])
    ///     return Response(status: error.suggestedHTTPStatus, body: error.clientMessage)
    /// }
    /// ```
    ///
    /// For example `"the origin answered HTTP 404"`, `"the image's address is not allowed"`,
    /// `"the origin could not be reached"`, `"the image is corrupt"`.
    public var clientMessage: String {
        if code == .blocklisted {
            return "the image failed recently and is not fetched again yet: "
                + (original?.clientMessage ?? "the image could not be loaded")
        }
        return switch code {
        case .httpStatus:
            httpStatus.map { "the origin answered HTTP \($0)" } ?? "the origin answered with an error"
        case .unknownFormat: "the response is not an image"
        case .unsupportedFormat, .unsupportedFeature: "the image's format is not supported"
        case .corrupt: "the image is corrupt"
        case .truncated: "the image is truncated"
        case .limitExceeded: "the image is larger than the service decodes"
        case .responseTooLarge: "the image is larger than the service downloads"
        case .timedOut: "the origin did not answer in time"
        case .deadlineExceeded: "the image took too long to load"
        case .network, .dnsFailed, .connectFailed, .tlsFailed, .transferFailed: "the origin could not be reached"
        case .tooManyRedirects: "the origin redirected too many times"
        case .invalidResponse: "the origin's response was not acceptable"
        case .unacceptableContentType: "the origin's response is not an accepted image type"
        case .invalidURL, .invalidArgument: "the image's URL is not valid"
        case .disallowedProtocol: "the image's URL scheme is not allowed"
        case .destinationRefused: "the image's address is not allowed"
        case .notInCache: "the image is not in the cache"
        case .vetoed: "the image may not be loaded"
        case .overloaded, .outOfMemory: "the service is busy; try again later"
        case .shutDown: "the service is shutting down"
        case .cancelled: "the request was cancelled"
        default: "the image could not be processed"
        }
    }
}
