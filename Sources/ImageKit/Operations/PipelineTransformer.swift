/// Several transformers applied in order, as one.
public struct PipelineTransformer: CancellableImageTransformer {
    /// The transformers, first applied first.
    public var transformers: [any ImageTransformer]

    /// A pipeline applying `transformers` in order.
    public init(_ transformers: [any ImageTransformer]) {
        self.transformers = transformers
    }

    /// The keys of the transformers joined by `|`.
    public var key: String { transformers.map(\.key).joined(separator: "|") }

    /// `image` passed through every transformer in order; those that can stop part-way are
    /// handed `cancellation`, and none starts once it is cancelled.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        try transformers.reduce(image) { image, transformer in
            if cancellation.isCancelled { throw ImageKitError.cancelled }
            return try transformer.transform(image, stoppingOn: cancellation)
        }
    }
}
