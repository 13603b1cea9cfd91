#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ``ImageLoading`` loader is asked to load: the URL, the validators of a cached copy
/// when the manager revalidates it, and the load's options and context, from which a loader
/// takes what it uses (``Downloader`` its priority, TLS and cookie flags and the context's
/// ``ImageContext/requestModifier``; a loader of your own may ignore all of them).
public struct ImageLoaderRequest: Sendable {
    /// The image's URL.
    public var url: URL
    /// The entity tag and last-modified date stored with the cached copy, when the manager
    /// revalidates it (``ImageOptions/refreshCached``): a loader that can tell the copy is
    /// still current answers ``DownloadResult/Status/notModified``; one that cannot ignores them.
    public var validators: DownloadRequest.Validators?
    /// The load's options (after the manager's options processor).
    public var options: ImageOptions
    /// The load's context (after the manager's options processor).
    public var context: ImageContext

    /// A request with every part given.
    public init(url: URL, validators: DownloadRequest.Validators? = nil, options: ImageOptions = [],
                context: ImageContext = ImageContext()) {
        self.url = url
        self.validators = validators
        self.options = options
        self.context = context
    }
}
