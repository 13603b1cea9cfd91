#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What to download. Two requests that are equal after the downloader applies
/// its defaults share one transfer while both are in flight.
public struct DownloadRequest: Sendable, Hashable {
    /// The HTTP method.
    public enum Method: String, Sendable, Hashable {
        /// Download the body.
        case get = "GET"
        /// Ask for the head only.
        case head = "HEAD"
    }

    /// Stored validators of a cached copy, sent as If-None-Match / If-Modified-Since.
    /// A 304 answer is then reported as ``DownloadResult/Status/notModified``.
    public struct Validators: Sendable, Hashable {
        /// The cached response's ETag.
        public var entityTag: String?
        /// The cached response's Last-Modified date, as the server wrote it.
        public var lastModified: String?

        /// Validators from a cached response's ETag and Last-Modified.
        public init(entityTag: String? = nil, lastModified: String? = nil) {
            self.entityTag = entityTag
            self.lastModified = lastModified
        }
    }

    /// An http or https URL.
    public var url: URL
    /// GET (the default) or HEAD.
    public var method: Method
    /// Headers added to (and replacing by name) the configuration's default headers.
    public var headers: HTTPHeaders
    /// Validators for a conditional request, or nil.
    public var validators: Validators?
    /// Bytes to ask for (first...last, inclusive), or nil for the whole body.
    public var byteRange: ClosedRange<Int64>?
    /// Overrides the configuration's whole-transfer timeout.
    public var timeout: Duration?
    /// Overrides the configuration's TLS options (for example to trust one more CA).
    public var tls: DownloaderConfiguration.TLSOptions?
    /// Overrides the configuration's ``DownloaderConfiguration/usesCookies``: whether this
    /// request sends and stores cookies in the downloader's jar.
    public var usesCookies: Bool?
    /// Overrides the configuration's ``DownloaderConfiguration/destinationPolicy`` for this
    /// request (and its redirects).
    public var destinationPolicy: DestinationPolicy?

    /// A GET request for `url` with the downloader's defaults.
    public init(url: URL, method: Method = .get, headers: HTTPHeaders = [:], validators: Validators? = nil,
                byteRange: ClosedRange<Int64>? = nil, timeout: Duration? = nil,
                tls: DownloaderConfiguration.TLSOptions? = nil, usesCookies: Bool? = nil,
                destinationPolicy: DestinationPolicy? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.validators = validators
        self.byteRange = byteRange
        self.timeout = timeout
        self.tls = tls
        self.usesCookies = usesCookies
        self.destinationPolicy = destinationPolicy
    }
}
