#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch

/// Settings of a ``Downloader``, fixed when it is created.
public struct DownloaderConfiguration: Sendable {
    /// Which queued download starts first among those of the same priority.
    public enum ExecutionOrder: Sendable, Hashable {
        /// Oldest first (the default).
        case fifo
        /// Newest first: what was asked for last is usually what is on screen now.
        case lifo
    }

    /// How TLS certificates are checked.
    public struct TLSOptions: Sendable, Hashable {
        /// Verify the server's certificate chain and host name (the default). Turn off
        /// only for a host you trust by other means.
        public var verifiesPeer: Bool
        /// A PEM file of CA certificates to trust instead of the system's, or nil.
        public var caFile: String?
        /// The certificate to present to servers that ask for one (mutual TLS), or nil.
        public var clientCertificate: ClientCertificate?

        /// TLS options; by default verify against the system's CAs and present no certificate.
        public init(verifiesPeer: Bool = true, caFile: String? = nil, clientCertificate: ClientCertificate? = nil) {
            self.verifiesPeer = verifiesPeer
            self.caFile = caFile
            self.clientCertificate = clientCertificate
        }
    }

    /// HTTP basic-auth credentials, sent only to the host of the request (not after a
    /// redirect to another host).
    public struct Credentials: Sendable, Hashable {
        /// The user name.
        public var username: String
        /// The password.
        public var password: String

        /// Credentials for basic auth.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// Abort a transfer that moves fewer than `bytesPerSecond` for `seconds` in a row.
    public struct LowSpeedLimit: Sendable, Hashable {
        /// The slowest acceptable speed.
        public var bytesPerSecond: Int
        /// How long the transfer may stay below it, in whole seconds.
        public var seconds: Int

        /// A low-speed limit.
        public init(bytesPerSecond: Int, seconds: Int) {
            self.bytesPerSecond = bytesPerSecond
            self.seconds = seconds
        }
    }

    /// Turns a request into the one to send, or nil to cancel it. Runs once per caller,
    /// before coalescing, so requests it makes equal share one transfer.
    public typealias RequestModifier = @Sendable (DownloadRequest) async -> DownloadRequest?

    /// Checks a response head before its body is read; throwing rejects the download
    /// (with the thrown ``ImageKitError``, or an ``ImageKitError/Code/invalidResponse`` error
    /// whose ``ImageKitError/underlying`` is the thrown error).
    /// Runs on the download thread: it must be quick and must not block.
    public typealias ResponseValidator = @Sendable (DownloadResponse) throws -> Void

    /// Rewrites a finished download (SDWebImage's `SDWebImageDownloaderResponseModifier`):
    /// its status (``DownloadResult/Status/notModified`` or not), response head (status code,
    /// headers) and body. Runs once per transfer on every download the downloader accepted
    /// (acceptable status and content type, passed by the ``ResponseValidator``), before the
    /// ``Decryptor`` and before any caller sees the result — so before an ``ImageManager``
    /// checks or decodes it. Throwing fails the download for every caller (with the thrown
    /// ``ImageKitError``, or ``ImageKitError/invalidResponse(_:)``). Runs on a thread of the
    /// downloader's own, never the download thread.
    public typealias ResponseModifier = @Sendable (DownloadResult) throws -> DownloadResult

    /// Turns a downloaded body into the bytes to hand on, given the response head
    /// (SDWebImage's `SDWebImageDownloaderDecryptor`): for images stored encrypted or wrapped.
    /// Runs once per transfer on a downloaded body (not on a ``DownloadResult/Status/notModified``
    /// answer), after the ``ResponseModifier``, on the same thread; throwing fails the download
    /// as the modifier's error does.
    public typealias Decryptor = @Sendable (Data, DownloadResponse) throws -> Data

    /// Most downloads in flight at once (default 6); more wait in a queue.
    public var maxConcurrentDownloads: Int
    /// Most downloads in flight at once to one host (host and port), or nil for no limit
    /// beyond the total.
    public var maxConcurrentDownloadsPerHost: Int?
    /// Order of queued downloads of the same priority (default FIFO).
    public var executionOrder: ExecutionOrder
    /// Longest a whole transfer may take, redirects included (default 15 s).
    public var timeout: Duration
    /// Longest connecting may take (default 10 s).
    public var connectTimeout: Duration
    /// Abort transfers that stall below a speed, or nil (the default) to rely on `timeout`.
    public var lowSpeedLimit: LowSpeedLimit?
    /// Most redirects to follow (default 5).
    public var maxRedirects: Int
    /// Headers sent with every request; a request's own headers replace them by name.
    /// By default an `Accept` naming the formats ImageKit decodes and a `User-Agent`.
    public var defaultHeaders: HTTPHeaders
    /// Advertise and decode content encodings (gzip, deflate, br, zstd). Default on.
    public var acceptsCompressedResponses: Bool
    /// Statuses that count as success (default 200..<300). A 304 answering a
    /// conditional request is reported as ``DownloadResult/Status/notModified``.
    public var acceptableStatusCodes: Range<Int>
    /// Media types accepted (`"image/png"`, or `"image/*"` for a family), or nil (the
    /// default) for any: the decoder checks the bytes themselves.
    public var acceptableContentTypes: Set<String>?
    /// Largest body accepted (default 64 MiB): refused from Content-Length before the
    /// body is read, and aborted as soon as the running count passes it.
    public var maxBodyBytes: Int
    /// TLS verification options.
    public var tls: TLSOptions
    /// Basic-auth credentials, or nil.
    public var credentials: Credentials?
    /// Send and store cookies in a jar private to the downloader (default off).
    public var usesCookies: Bool
    /// Rewrites or cancels requests before they are sent, or nil.
    public var requestModifier: RequestModifier?
    /// Accepts or rejects response heads, or nil.
    public var responseValidator: ResponseValidator?
    /// Rewrites finished downloads, or nil.
    public var responseModifier: ResponseModifier?
    /// Decrypts downloaded bodies, or nil.
    public var decryptor: Decryptor?
    /// Receivers of download events (start, response, progress, finish, failure), called
    /// where the events happen (see ``DownloaderObserver``).
    public var observers: [any DownloaderObserver]
    /// Where completion handlers and progress handlers are called. The async API resumes
    /// its caller directly and uses this queue only for progress.
    public var callbackQueue: DispatchQueue
    /// Shortest interval between two progress reports of one download (default 100 ms).
    public var progressInterval: Duration
    /// Most connections to keep open for reuse, or nil for libcurl's default.
    public var maxIdleConnections: Int?
    /// Which destinations downloads may connect to (default ``DestinationPolicy/publicOnly``:
    /// not this machine, private networks, link-local or cloud metadata addresses). A
    /// request's ``DownloadRequest/destinationPolicy`` replaces it.
    public var destinationPolicy: DestinationPolicy
    /// The proxy every download goes through (`"http://proxy.internal:3128"`), or nil (the
    /// default) for none. The environment's proxy variables (`http_proxy`, …) are never
    /// used. Through a proxy the ``destinationPolicy`` checks only the URL's host: the
    /// proxy resolves names and must refuse internal destinations itself.
    public var proxy: String?

    /// The `Accept` header listing the formats ImageKit decodes.
    public static let defaultAccept = "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8,*/*;q=0.5"
    /// The default `User-Agent`.
    public static let defaultUserAgent = "ImageKit (Linux; libcurl)"

    /// The defaults described on each property.
    public init() {
        maxConcurrentDownloads = 6
        maxConcurrentDownloadsPerHost = nil
        executionOrder = .fifo
        timeout = .seconds(15)
        connectTimeout = .seconds(10)
        lowSpeedLimit = nil
        maxRedirects = 5
        defaultHeaders = ["Accept": Self.defaultAccept, "User-Agent": Self.defaultUserAgent]
        acceptsCompressedResponses = true
        acceptableStatusCodes = 200..<300
        acceptableContentTypes = nil
        maxBodyBytes = 64 * 1024 * 1024
        tls = TLSOptions()
        credentials = nil
        usesCookies = false
        requestModifier = nil
        responseValidator = nil
        responseModifier = nil
        decryptor = nil
        observers = []
        callbackQueue = DispatchQueue(label: "ImageKit.Downloader.callbacks")
        progressInterval = .milliseconds(100)
        maxIdleConnections = nil
        destinationPolicy = .publicOnly
        proxy = nil
    }
}
