/// What an ``ImageCaching`` query found: the value, what was stored with it, and the tier it
/// came from.
public struct ImageCacheHit: Sendable {
    /// The entry's value, of the kind asked for.
    public var value: ImageCacheValue
    /// The validators, expiry and caller data stored with the entry (empty for a tier that
    /// keeps none, such as ``ImageCache``'s memory tier).
    public var metadata: DiskCacheMetadata
    /// The tier that held it: ``ImageCacheType/memory`` or ``ImageCacheType/disk``.
    public var tier: ImageCacheType

    /// A hit with the given parts.
    public init(value: ImageCacheValue, metadata: DiskCacheMetadata = DiskCacheMetadata(), tier: ImageCacheType) {
        self.value = value
        self.metadata = metadata
        self.tier = tier
    }
}
