import ImageKit

extension ImageManager {
    /// The ``Downloader`` these tests create the manager with: its loader, or the downloader
    /// among the loaders of the ``ImageLoadersManager`` `init(cache:downloader:)` makes.
    var builtInDownloader: Downloader {
        if let downloader = loader as? Downloader { return downloader }
        guard let found = (loader as? ImageLoadersManager)?.loaders.lazy.compactMap({ $0 as? Downloader }).first else {
            preconditionFailure("the test made this manager over \(type(of: loader)), with no Downloader")
        }
        return found
    }
}
