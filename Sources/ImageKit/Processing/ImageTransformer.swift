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
