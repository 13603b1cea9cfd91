/// Where the time of one load went. A stage that did not run is nil.
public struct ImageLoadMetrics: Sendable, Hashable {
    /// From the call to this completion.
    public var total: Duration
    /// Looking in the disk tier (the memory lookup is part of ``total`` only).
    public var diskQuery: Duration?
    /// The transfer's figures from libcurl, when the image was downloaded.
    public var download: DownloadMetrics?
    /// Decoding (thumbnailing included).
    public var decode: Duration?
    /// Running the transformer.
    public var transform: Duration?
    /// Encoding the result, for loads asking for encoded bytes that were not cached.
    public var encode: Duration?
    /// Waiting for a turn to download and decode (see ``ImageManagerConfiguration/maxActivePipelines``).
    public var queueWait: Duration?
    /// Writing to the disk tier, when the completion waited for it (``ImageOptions/waitStoreCache``).
    public var store: Duration?
    /// How many loads shared this download and decode (1 when none was coalesced).
    public var sharedBy: Int
    /// For a download decoded as it streamed in (``ImageManagerConfiguration/streamsDecoding``):
    /// the most body bytes that waited at once for the decode to take them (0 when it kept
    /// pace). Nil when the body was decoded whole.
    public var streamQueuePeakBytes: Int?

    /// Metrics with every figure given (all stages absent by default).
    public init(total: Duration = .zero, diskQuery: Duration? = nil, download: DownloadMetrics? = nil,
                decode: Duration? = nil, transform: Duration? = nil, encode: Duration? = nil,
                queueWait: Duration? = nil, store: Duration? = nil, sharedBy: Int = 1) {
        self.total = total
        self.diskQuery = diskQuery
        self.download = download
        self.decode = decode
        self.transform = transform
        self.encode = encode
        self.queueWait = queueWait
        self.store = store
        self.sharedBy = sharedBy
    }
}
