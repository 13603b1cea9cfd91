extension ImageKitError {
    /// The kind of an ``ImageKitError``: a stable number and a stable snake-case name.
    ///
    /// Compare a code with `==`, or switch over it; the switch needs a `default:` clause,
    /// because new codes may be added in minor releases:
    ///
    /// ```swift
    /// switch error.code {
    /// case .httpStatus where error.httpStatus == 404: notFound()
    /// case .timedOut, .connectFailed: retryLater()
    /// default: fail(error)
    /// }
    /// ```
    ///
    /// A code's ``rawValue`` and ``name`` never change: 1–14 are the C core's status codes,
    /// 20–39 downloads, 50–69 the image manager.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable number (the C core's status code for those that share it).
        public let rawValue: Int
        /// The stable snake-case name (`http_status`, `timed_out`, …), as in metric dimensions
        /// and log metadata.
        public let name: String

        private init(_ rawValue: Int, _ name: String) {
            self.rawValue = rawValue
            self.name = name
        }

        /// The same as ``name``.
        public var description: String { name }

        /// An argument could not be used.
        public static let invalidArgument = Code(1, "invalid_argument")
        /// The bytes are not in a format ImageKit recognises.
        public static let unknownFormat = Code(2, "unknown_format")
        /// The format is recognised but not decoded (TIFF, HEIC, …); ``ImageKitError/format`` says
        /// which.
        public static let unsupportedFormat = Code(3, "unsupported_format")
        /// The format decodes, but this file uses a feature that does not (12-bit JPEG, …).
        public static let unsupportedFeature = Code(4, "unsupported_feature")
        /// The input exceeds a configured limit (pixels, frames, bytes).
        public static let limitExceeded = Code(5, "limit_exceeded")
        /// The data is malformed.
        public static let corrupt = Code(6, "corrupt")
        /// The data ends before the image is complete.
        public static let truncated = Code(7, "truncated")
        /// An allocation failed.
        public static let outOfMemory = Code(8, "out_of_memory")
        /// A file-system operation failed.
        public static let io = Code(9, "io")
        /// The work was cancelled.
        public static let cancelled = Code(10, "cancelled")
        /// An encoder rejected the image or its options.
        public static let encodeFailed = Code(11, "encode_failed")
        /// The disk has no room left.
        public static let noSpace = Code(12, "no_space")
        /// An internal invariant failed, or a foreign error was wrapped (see
        /// ``ImageKitError/underlying``).
        public static let `internal` = Code(14, "internal")

        /// The server answered with a status outside the acceptable range;
        /// ``ImageKitError/httpStatus-swift.property`` says which.
        public static let httpStatus = Code(20, "http_status")
        /// The connection broke mid-transfer: reset, closed early, body shorter than its Content-Length.
        public static let network = Code(21, "network")
        /// A timeout fired: connect, whole transfer, or the low-speed limit.
        public static let timedOut = Code(22, "timed_out")
        /// The host name could not be resolved.
        public static let dnsFailed = Code(23, "dns_failed")
        /// No connection could be made to the server.
        public static let connectFailed = Code(24, "connect_failed")
        /// The TLS handshake or certificate verification failed.
        public static let tlsFailed = Code(25, "tls_failed")
        /// The response body is larger than the configured limit.
        public static let responseTooLarge = Code(26, "response_too_large")
        /// The server redirected more times than allowed.
        public static let tooManyRedirects = Code(27, "too_many_redirects")
        /// The URL or a redirect uses a scheme other than http or https.
        public static let disallowedProtocol = Code(28, "disallowed_protocol")
        /// The URL cannot be used for a download.
        public static let invalidURL = Code(29, "invalid_url")
        /// The response's Content-Type is not one of the acceptable types.
        public static let unacceptableContentType = Code(30, "unacceptable_content_type")
        /// The response validator rejected the response.
        public static let invalidResponse = Code(31, "invalid_response")
        /// Any other transfer failure; ``ImageKitError/curlCode`` has libcurl's error code.
        public static let transferFailed = Code(32, "transfer_failed")
        /// The downloader's ``DestinationPolicy`` refused the address (or host) to connect to.
        public static let destinationRefused = Code(33, "destination_refused")

        /// The URL failed earlier for a lasting reason (``ImageKitError/original``) and is
        /// refused until its blocklist entry expires.
        public static let blocklisted = Code(50, "blocklisted")
        /// `fromCacheOnly` was asked for and no cache tier has the image.
        public static let notInCache = Code(51, "not_in_cache")
        /// The load's deadline passed before it finished.
        public static let deadlineExceeded = Code(52, "deadline_exceeded")
        /// The manager's delegate refused the download.
        public static let vetoed = Code(53, "vetoed")
        /// An image transformer failed.
        public static let transformFailed = Code(54, "transform_failed")
        /// Too many loads wait for a turn to download and decode.
        public static let overloaded = Code(55, "overloaded")
        /// The manager (or downloader, or cache) was shut down.
        public static let shutDown = Code(56, "shut_down")
    }
}
