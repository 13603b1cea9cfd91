/// Turns a decoded image into another one after loading, before caching — SDWebImage's
/// `SDImageTransformer`.
///
/// The ``key`` names the transformation and its parameters; the image manager adds it
/// to the cache key, so images transformed differently never share a cache entry.
/// Transformers run on ImageKit's worker threads, never on the Swift cooperative pool.
///
/// ```swift
/// struct Grayscale: ImageTransformer {
///     var key: String { "grayscale" }
///     func transform(_ image: Image) throws -> Image { … }
/// }
/// ```
public protocol ImageTransformer: Sendable {
    /// A stable name for this transformation and its parameters (the same for equal
    /// transformers, across runs and processes: it ends up in disk cache keys).
    var key: String { get }

    /// Returns the transformed image; throws to fail the load (with an
    /// ``ImageKitError/Code/transformFailed`` error whose ``ImageKitError/underlying`` is the thrown error).
    func transform(_ image: Image) throws -> Image
}

/// A transformer that can stop part-way: the image manager calls
/// ``transform(_:cancellation:)`` with the load's cancellation, which is cancelled when the
/// last request waiting for the load goes away, so a long operation on a large image does not
/// keep a worker thread busy for nobody. Every operation ImageKit ships conforms.
public protocol CancellableImageTransformer: ImageTransformer {
    /// Returns the transformed image, throwing ``ImageKitError/cancelled`` soon after
    /// `cancellation` is cancelled.
    func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image
}

extension CancellableImageTransformer {
    /// The transformed image, with a cancellation nobody cancels.
    public func transform(_ image: Image) throws -> Image {
        try transform(image, cancellation: DecodeCancellation())
    }
}

extension ImageTransformer {
    /// `image` through ``CancellableImageTransformer/transform(_:cancellation:)`` when this
    /// transformer can stop part-way, else through ``transform(_:)``.
    func transform(_ image: Image, stoppingOn cancellation: DecodeCancellation) throws -> Image {
        if let cancellable = self as? any CancellableImageTransformer {
            return try cancellable.transform(image, cancellation: cancellation)
        }
        return try transform(image)
    }
}
