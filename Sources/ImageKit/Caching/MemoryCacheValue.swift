/// What a ``MemoryCache`` entry holds: a decoded image or an encoded variant.
enum MemoryCacheValue: Sendable {
    case image(Image)
    case encoded(EncodedImage)

    /// Bytes charged against the cost limit: pixels, or encoded bytes.
    var cost: Int {
        switch self {
        case .image(let image): image.cost
        case .encoded(let encoded): encoded.cost
        }
    }

    var image: Image? {
        if case .image(let image) = self { image } else { nil }
    }

    var encoded: EncodedImage? {
        if case .encoded(let encoded) = self { encoded } else { nil }
    }
}
