#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ``ImageLoading`` loader is asked to load: the URL and exactly what a loader uses
/// besides it — the validators of a cached copy when the manager revalidates it, the load's
/// priority, its TLS and cookie choices, and the hook that rewrites the request (its headers,
/// its URL) before it is sent. ``Downloader`` uses all of them; a loader of your own may
/// ignore everything but the URL.
public struct ImageLoaderRequest: Sendable {
    /// The image's URL.
    public var url: URL
    /// The entity tag and last-modified date stored with the cached copy, when the manager
    /// revalidates it (``ImageOptions/refreshCached``): a loader that can tell the copy is
    /// still current answers ``DownloadResult/Status/notModified``; one that cannot ignores them.
    public var validators: DownloadRequest.Validators?
    /// How urgent the load is (the context's ``ImageContext/priority``).
    public var priority: ImagePriority
    /// Whether the server's certificate is verified: false under
    /// ``ImageOptions/allowInvalidSSLCertificates``.
    public var verifiesPeer: Bool
    /// Whether the loader's cookie jar is used: true under ``ImageOptions/handleCookies``.
    public var usesCookies: Bool
    /// Rewrites (its headers, its URL) or cancels (nil) the request before it is sent: the
    /// context's ``ImageContext/requestModifier``.
    public var requestModifier: DownloaderConfiguration.RequestModifier?

    /// A request with every part given; by default a plain load at normal priority.
    public init(url: URL, validators: DownloadRequest.Validators? = nil, priority: ImagePriority = .normal,
                verifiesPeer: Bool = true, usesCookies: Bool = false,
                requestModifier: DownloaderConfiguration.RequestModifier? = nil) {
        self.url = url
        self.validators = validators
        self.priority = priority
        self.verifiesPeer = verifiesPeer
        self.usesCookies = usesCookies
        self.requestModifier = requestModifier
    }
}
