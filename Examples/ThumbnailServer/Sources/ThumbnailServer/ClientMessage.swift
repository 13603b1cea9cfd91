import ImageKit

/// What a client is told about a failed load: a sentence chosen by the error's code (and, for an
/// origin's answer, its status), then the code's name. Never the error's own ``message``, which
/// may name the origin's URL, an internal host or address, or credentials in the URL.
func clientMessage(for error: ImageKitError) -> String {
    "\(sentence(for: error)) (\(error.code.name))"
}

/// The sentence for `error`'s code.
private func sentence(for error: ImageKitError) -> String {
    switch error.code {
    case .httpStatus:
        return error.httpStatus.map { "the origin answered HTTP \($0)" } ?? "the origin answered with an error"
    case .unknownFormat, .unsupportedFormat, .unsupportedFeature, .corrupt, .truncated:
        return "the origin's file is not an image this server decodes"
    case .limitExceeded:
        return "the image is larger than this server decodes"
    case .responseTooLarge:
        return "the origin's file is larger than this server downloads"
    case .network, .dnsFailed, .connectFailed, .tlsFailed, .tooManyRedirects, .transferFailed,
         .invalidResponse, .unacceptableContentType:
        return "the origin could not be reached or sent no usable answer"
    case .timedOut, .deadlineExceeded:
        return "the origin did not answer in time"
    case .invalidURL, .disallowedProtocol, .invalidArgument:
        return "bad image name"
    case .destinationRefused, .vetoed:
        return "the image's location is not allowed"
    case .blocklisted:
        return error.original.map { "it failed recently: \(sentence(for: $0))" } ?? "it failed recently"
    case .notInCache:
        return "the image is not in the cache"
    case .overloaded:
        return "too many images are waiting to be made; try again later"
    case .shutDown:
        return "the server is shutting down"
    case .outOfMemory:
        return "the server is out of memory"
    case .cancelled:
        return "the request was cancelled"
    default:
        return "the thumbnail could not be made"
    }
}
