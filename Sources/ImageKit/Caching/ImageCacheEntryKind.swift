/// What an ``ImageCaching`` entry holds: each kind of a load's result is stored under a key
/// of its own (see ``ImageManager/cacheKey(for:as:options:context:)``).
public enum ImageCacheEntryKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A decoded (and transformed) image, stored under the image's key.
    case image
    /// An encoded variant (the image after processing, encoded), stored under the variant's key.
    case variant
    /// The bytes as downloaded, stored under the URL's key.
    case original

    /// `image`, `variant` or `original` (for logs and metrics labels).
    public var description: String {
        switch self {
        case .image: "image"
        case .variant: "variant"
        case .original: "original"
        }
    }
}
