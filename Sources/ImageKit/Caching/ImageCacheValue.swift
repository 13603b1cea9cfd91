#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One entry's value in an ``ImageCaching`` cache: what is stored, and what a query finds.
public enum ImageCacheValue: Sendable {
    /// A decoded image (``ImageCacheEntryKind/image``).
    case image(Image)
    /// An encoded variant (``ImageCacheEntryKind/variant``).
    case variant(EncodedImage)
    /// The original bytes (``ImageCacheEntryKind/original``).
    case original(Data)

    /// The kind of entry this value is.
    public var kind: ImageCacheEntryKind {
        switch self {
        case .image: .image
        case .variant: .variant
        case .original: .original
        }
    }

    /// The decoded image, for an ``image(_:)`` value.
    public var image: Image? {
        if case .image(let image) = self { image } else { nil }
    }

    /// The encoded variant, for a ``variant(_:)`` value.
    public var variant: EncodedImage? {
        if case .variant(let encoded) = self { encoded } else { nil }
    }

    /// The original bytes, for an ``original(_:)`` value.
    public var original: Data? {
        if case .original(let data) = self { data } else { nil }
    }
}
