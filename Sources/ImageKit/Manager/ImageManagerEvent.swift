#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something that happened during an ``ImageManager`` load, for an ``ImageManagerObserver``.
///
/// Work shared by coalesced loads (disk query, download, decode, transform, store) is
/// reported once; `completed`, `failed` and `cancelled` are reported for every load
/// (identified by ``ImageTask/id``).
public enum ImageManagerEvent: Sendable {
    /// A cache tier (`.memory` or `.disk`; `.all` for a cache asked for both at once) was asked
    /// for the decoded image or the encoded variant stored under `key`; on a hit, `tier` is the
    /// tier that had it.
    case cacheQuery(url: URL, key: String, tier: ImageCacheType, hit: Bool, duration: Duration)
    /// The cache was asked for the original encoded bytes stored under `key` (with
    /// ``ImageCache``, its disk tier's original-data store).
    case originalDataQuery(url: URL, key: String, hit: Bool, duration: Duration)
    /// The loader began loading the image: a download, a file read, or a custom loader's load.
    case downloadStarted(url: URL)
    /// A download ended with a response: its head (status, headers) and libcurl's figures
    /// (time to first byte, total, bytes); a `304 Not Modified` is reported here too. Only
    /// loaders reporting a response and metrics (a ``Downloader`` does; a ``FileLoader`` does
    /// not) send it.
    case downloadFinished(url: URL, response: DownloadResponse, metrics: DownloadMetrics)
    /// The loader's load failed.
    case downloadFailed(url: URL, error: ImageKitError, duration: Duration)
    /// Decoding began on a worker thread.
    case decodeStarted(url: URL, key: String)
    /// Decoding produced an image of `size`.
    case decoded(url: URL, key: String, size: PixelSize, duration: Duration)
    /// Decoding failed (``ImageKitError/cancelled`` when it was stopped).
    case decodeFailed(url: URL, key: String, error: ImageKitError, duration: Duration)
    /// The transformer ran (`error` is set when it failed).
    case transformed(url: URL, key: String, transformer: String, duration: Duration, error: ImageKitError?)
    /// The image was encoded into a variant of `bytes` bytes (`error` is set when it failed).
    case encoded(url: URL, key: String, format: ImageFormat, bytes: Int, duration: Duration, error: ImageKitError?)
    /// The image (and the original bytes, for the disk tier) was written to `tiers`.
    case stored(url: URL, key: String, tiers: ImageCacheType, duration: Duration, error: ImageKitError?)
    /// A load completed with an image from `source` (called twice for a refreshed load whose
    /// image changed).
    case completed(task: UInt64, url: URL, source: ImageSource, duration: Duration)
    /// A load failed (`url` is nil when it was not a URL at all).
    case failed(task: UInt64, url: URL?, error: ImageKitError, duration: Duration)
    /// A load was cancelled by its caller.
    case cancelled(task: UInt64, url: URL?, duration: Duration)
}
