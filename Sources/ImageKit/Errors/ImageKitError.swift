/// Every error ImageKit reports.
///
/// Each case has a stable numeric ``code`` and carries the sentence from the
/// layer that failed (the decoder's, the disk tier's, …), for example
/// `"PNG: IDAT: CRC error"` or `"JPEG: truncated after 4112 bytes"`.
public enum ImageKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An argument could not be used.
    case invalidArgument(String)
    /// The bytes are not in a format ImageKit recognises.
    case unknownFormat(String)
    /// The format is recognised but not decoded (TIFF, HEIC, …).
    case unsupportedFormat(ImageFormat, String)
    /// The format decodes, but this file uses a feature that does not (12-bit JPEG, …).
    case unsupportedFeature(String)
    /// The input exceeds a configured limit (pixels, frames, bytes).
    case limitExceeded(String)
    /// The data is malformed.
    case corrupt(String)
    /// The data ends before the image is complete.
    case truncated(String)
    /// An allocation failed.
    case outOfMemory(String)
    /// A file-system operation failed.
    case io(String)
    /// The work was cancelled.
    case cancelled
    /// An encoder rejected the image or its options.
    case encodeFailed(String)
    /// The disk has no room left.
    case noSpace(String)
    /// An internal invariant failed.
    case `internal`(String)

    // Downloads (codes 20–39).

    /// The server answered with a status outside the acceptable range (the status, and a sentence).
    case httpStatus(Int, String)
    /// The connection broke mid-transfer: reset, closed early, body shorter than its Content-Length.
    case network(String)
    /// A timeout fired: connect, whole transfer, or the low-speed limit.
    case timedOut(String)
    /// The host name could not be resolved.
    case dnsFailed(String)
    /// No connection could be made to the server.
    case connectFailed(String)
    /// The TLS handshake or certificate verification failed.
    case tlsFailed(String)
    /// The response body is larger than the configured limit.
    case responseTooLarge(String)
    /// The server redirected more times than allowed.
    case tooManyRedirects(String)
    /// The URL or a redirect uses a scheme other than http or https.
    case disallowedProtocol(String)
    /// The URL cannot be used for a download.
    case invalidURL(String)
    /// The response's Content-Type is not one of the acceptable types.
    case unacceptableContentType(String)
    /// The response validator rejected the response.
    case invalidResponse(String)
    /// Any other transfer failure, with libcurl's error code.
    case transferFailed(curlCode: Int, String)
    /// The downloader's ``DestinationPolicy`` refused the address (or host) the download or
    /// one of its redirects would connect to; nothing was sent there.
    case destinationRefused(String)

    // Image manager (codes 50–69). A URL the manager cannot load fails with ``invalidURL(_:)``.

    /// The URL failed earlier for a lasting reason (`original`) and is refused until its
    /// blocklist entry expires.
    indirect case blocklisted(String, original: ImageKitError)
    /// `fromCacheOnly` was asked for and no cache tier has the image.
    case notInCache(String)
    /// The load's deadline passed before it finished.
    case deadlineExceeded(String)
    /// The manager's delegate refused the download.
    case vetoed(String)
    /// An image transformer failed.
    case transformFailed(String)
    /// Too many loads wait for a turn to download and decode (``ImageManagerConfiguration/maxWaitingPipelines``).
    case overloaded(String)
    /// The manager (or downloader, or cache) was shut down.
    case shutDown(String)

    /// A stable number for the kind of error (the C core's status code for those that share it).
    public var code: Int {
        switch self {
        case .invalidArgument: 1
        case .unknownFormat: 2
        case .unsupportedFormat: 3
        case .unsupportedFeature: 4
        case .limitExceeded: 5
        case .corrupt: 6
        case .truncated: 7
        case .outOfMemory: 8
        case .io: 9
        case .cancelled: 10
        case .encodeFailed: 11
        case .noSpace: 12
        case .internal: 14
        case .httpStatus: 20
        case .network: 21
        case .timedOut: 22
        case .dnsFailed: 23
        case .connectFailed: 24
        case .tlsFailed: 25
        case .responseTooLarge: 26
        case .tooManyRedirects: 27
        case .disallowedProtocol: 28
        case .invalidURL: 29
        case .unacceptableContentType: 30
        case .invalidResponse: 31
        case .transferFailed: 32
        case .destinationRefused: 33
        case .blocklisted: 50
        case .notInCache: 51
        case .deadlineExceeded: 52
        case .vetoed: 53
        case .transformFailed: 54
        case .overloaded: 55
        case .shutDown: 56
        }
    }

    /// The human sentence describing the failure.
    public var message: String {
        switch self {
        case .invalidArgument(let m), .unknownFormat(let m), .unsupportedFeature(let m),
             .limitExceeded(let m), .corrupt(let m), .truncated(let m), .outOfMemory(let m),
             .io(let m), .encodeFailed(let m), .noSpace(let m), .internal(let m):
            m
        case .unsupportedFormat(_, let m):
            m
        case .network(let m), .timedOut(let m), .dnsFailed(let m), .connectFailed(let m),
             .tlsFailed(let m), .responseTooLarge(let m), .tooManyRedirects(let m),
             .disallowedProtocol(let m), .invalidURL(let m), .unacceptableContentType(let m),
             .invalidResponse(let m), .httpStatus(_, let m), .transferFailed(_, let m), .destinationRefused(let m):
            m
        case .blocklisted(let m, _), .notInCache(let m), .deadlineExceeded(let m), .vetoed(let m),
             .transformFailed(let m), .overloaded(let m), .shutDown(let m):
            m
        case .cancelled:
            "cancelled"
        }
    }

    /// The same as ``message``.
    public var description: String { message }
}
