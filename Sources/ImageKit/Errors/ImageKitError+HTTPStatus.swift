extension ImageKitError {
    /// The HTTP status a service proxying images should answer a failed load with.
    ///
    /// | failure | status |
    /// |---|---|
    /// | the origin answered 404, 410 or 451 | the same |
    /// | the origin answered 401 or 403 | 403 |
    /// | the origin answered 429, or any 5xx or other 4xx | 503 for 429, else 502 |
    /// | the origin sent no image (not an image, corrupt, truncated, unsupported format) | 422 |
    /// | the image is past a decode limit (pixels, frames, memory) | 422 |
    /// | the origin's body is larger than the downloader accepts | 413 |
    /// | DNS, connection, TLS, redirect or transfer failure; a response rejected by a validator | 502 |
    /// | the origin timed out, or the load's deadline passed | 504 |
    /// | a bad URL, a scheme the downloader refuses, an invalid argument | 400 |
    /// | a destination the downloader's policy refuses (loopback, private, metadata, …) | 403 |
    /// | blocklisted | the status of the failure that put the URL on the blocklist |
    /// | not in cache (``ImageOptions/fromCacheOnly``) | 404 |
    /// | vetoed by the delegate | 403 |
    /// | overloaded, shut down, out of memory | 503 |
    /// | cancelled (the client went away; nothing is sent) | 499, nginx's convention |
    /// | encoder, transformer, disk or internal failure, and any other | 500 |
    public var suggestedHTTPStatus: Int {
        if code == .httpStatus, let status = httpStatus {
            return switch status {
            case 404, 410, 451: status
            case 401, 403: 403
            case 429: 503
            default: 502
            }
        }
        return switch code {
        case .httpStatus:
            502
        case .unknownFormat, .unsupportedFormat, .unsupportedFeature, .corrupt, .truncated, .limitExceeded:
            422
        case .responseTooLarge:
            413
        case .network, .dnsFailed, .connectFailed, .tlsFailed, .tooManyRedirects, .transferFailed,
             .invalidResponse, .unacceptableContentType:
            502
        case .timedOut, .deadlineExceeded:
            504
        case .invalidURL, .disallowedProtocol, .invalidArgument:
            400
        case .destinationRefused:
            403
        case .blocklisted:
            original?.suggestedHTTPStatus ?? 500
        case .notInCache:
            404
        case .vetoed:
            403
        case .overloaded, .shutDown, .outOfMemory:
            503
        case .cancelled:
            499
        default:
            500
        }
    }
}
