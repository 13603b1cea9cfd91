import ImageKit

extension ImageManager {
    /// The manager's cache as the ``ImageCache`` these tests create it with, for looking at its
    /// tiers directly.
    public var builtInCache: ImageCache {
        guard let cache = cache as? ImageCache else {
            preconditionFailure("the test made this manager over \(type(of: cache)), not an ImageCache")
        }
        return cache
    }
}
