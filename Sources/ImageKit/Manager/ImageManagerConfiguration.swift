import Dispatch
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Settings of an ``ImageManager``, fixed when it is created.
public struct ImageManagerConfiguration: Sendable {
    /// Rewrites the options and context of every load before it starts (SDWebImage's
    /// `optionsProcessor`): for example to add ``ImageOptions/scaleDownLargeImages`` everywhere
    /// or a thumbnail size for one host.
    public typealias OptionsProcessor = @Sendable (URL, ImageOptions, ImageContext)
        -> (options: ImageOptions, context: ImageContext)

    /// Load `file:` URLs (read from disk, then decoded and cached like downloads). Default off:
    /// only http and https URLs load, so a URL from a client cannot read local files.
    public var allowsLocalFiles: Bool
    /// How long a URL that failed for a lasting reason stays on the blocklist (default 10
    /// minutes; `.zero` turns the blocklist off). A proxy whose origin gains files should keep
    /// it short (seconds), so a file uploaded after a 404 is served soon after.
    public var failedURLTimeToLive: Duration
    /// The origin statuses that put a URL on the blocklist (default: 4xx other than 408 and
    /// 429), among those the loader lets be blocked. Other failures are blocked when the loader's
    /// ``ImageLoading/shouldBlockFailedURL(_:error:)`` says so (by default, when
    /// ``ImageKitError/isLastingLoadFailure``); a ``delegate`` that implements
    /// `shouldBlockFailedURL` decides instead of both.
    public var failedURLStatusCodes: Set<Int>
    /// The most URLs the blocklist holds at once (default ``defaultFailedURLMaxCount``,
    /// 10,000). Past it the oldest entries go first; 0 lists nothing.
    public var failedURLMaxCount: Int
    /// The most bytes the blocklist holds (default ``defaultFailedURLMaxBytes``, 4 MiB): each
    /// entry counts its failure's message and about 100 bytes besides. URLs themselves are kept
    /// as 16-byte hashes, so clients sending long URLs cannot grow it. Past it the oldest
    /// entries go first.
    public var failedURLMaxBytes: Int
    /// Pipelines that may download, decode and encode at once, each holding a download body or
    /// a bitmap (default: 6 + 2 × ``decodeThreads``, the downloader's default concurrency plus
    /// a queue of two per decode thread). Loads past it wait for a turn holding nothing, so the
    /// memory a burst of cold loads holds follows this number, not the burst.
    public var maxActivePipelines: Int
    /// Pipelines that may wait for a turn (default `nil`: no limit). Past it, loads fail at once
    /// with ``ImageKitError/overloaded(_:)`` (503 in ``ImageKitError/suggestedHTTPStatus``): load
    /// shedding for a service that would rather refuse than queue.
    public var maxWaitingPipelines: Int?
    /// Decides downloads and blocklisting, or nil for the defaults.
    public var delegate: (any ImageManagerDelegate)?
    /// Rewrites each load's options and context, or nil.
    public var optionsProcessor: OptionsProcessor?
    /// Receivers of load events (cache queries, download, decode, transform, store, completion).
    public var observers: [any ImageManagerObserver]
    /// Makers of per-load observers, asked in the caller's context as each load starts (for
    /// tracing spans and request-scoped logs; see ``ImageLoadObserverFactory``).
    public var loadObserverFactories: [any ImageLoadObserverFactory]
    /// The serial queue completion and progress handlers run on unless a load's context names
    /// another. The `async` API resumes its caller directly and never uses it.
    public var callbackQueue: DispatchQueue
    /// Worker threads for decoding, transforming and encoding (default: the number of online CPUs).
    public var decodeThreads: Int
    /// Give a decode a helper thread (``DecodeOptions/usesHelperThread``) when it starts while
    /// no other worker job runs or waits, and none has run beside another for the last 100 ms,
    /// so a lone load finishes sooner and a busy manager keeps one thread per decode (default
    /// `true`; `false`: never). A helper that repeats the decode's work (a JPEG's bottom band,
    /// skipping the rows above) gives its rows back when another job arrives before it has
    /// skipped them, so a burst does not pay for it.
    public var decodeHelperThreadWhenIdle: Bool
    /// Limits every decode is held to.
    public var decodeLimits: DecodeLimits
    /// The frame size in bytes that ``ImageOptions/scaleDownLargeImages`` scales down to
    /// (default 64 MiB, 16 Mi pixels).
    public var scaleDownLimitBytes: Int
    /// Where decodes take large pixel buffers from, or nil for fresh memory every time: the
    /// pool of the built-in coder the manager makes when it is given no coders.
    public var bufferPool: BufferPool?
    /// Decode a download while its bytes arrive (default `true`), when the loader streams
    /// (``ImageStreamingLoading``) and nothing needs the whole body first (a revalidation): a
    /// cold load then takes about the longer of the download and the decode, and keeps the
    /// body only to store it (``ImageContext/originalStoreCacheType``). `false`: download the
    /// whole body, then decode it.
    public var streamsDecoding: Bool = true

    /// The default of ``failedURLMaxCount``: 10,000 URLs.
    public static let defaultFailedURLMaxCount = 10_000
    /// The default of ``failedURLMaxBytes``: 4 MiB.
    public static let defaultFailedURLMaxBytes = 4 << 20

    /// The defaults described on each property.
    public init() {
        allowsLocalFiles = false
        failedURLTimeToLive = .seconds(600)
        failedURLStatusCodes = Set(400..<500).subtracting([408, 429])
        failedURLMaxCount = Self.defaultFailedURLMaxCount
        failedURLMaxBytes = Self.defaultFailedURLMaxBytes
        delegate = nil
        optionsProcessor = nil
        observers = []
        loadObserverFactories = []
        callbackQueue = DispatchQueue(label: "ImageKit.ImageManager.callbacks")
        decodeThreads = ProcessorCount.online
        decodeHelperThreadWhenIdle = true
        maxActivePipelines = 6 + 2 * ProcessorCount.online
        maxWaitingPipelines = nil
        decodeLimits = DecodeLimits()
        scaleDownLimitBytes = 64 << 20
        bufferPool = .shared
    }
}
