/// Several transformers applied in order, as one.
public struct PipelineTransformer: ImageTransformer {
    /// The transformers, first applied first.
    public var transformers: [any ImageTransformer]

    /// A pipeline applying `transformers` in order.
    public init(_ transformers: [any ImageTransformer]) {
        self.transformers = transformers
    }

    /// The keys of the transformers joined by `|`.
    public var key: String { transformers.map(\.key).joined(separator: "|") }

    /// `image` passed through every transformer in order.
    public func transform(_ image: Image) throws -> Image {
        try transformers.reduce(image) { try $1.transform($0) }
    }
}
