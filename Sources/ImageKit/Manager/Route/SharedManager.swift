#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Holds ``ImageManager/shared``: made on first use, under a lock so two first uses make one
/// manager; a failure is thrown to that use and the next one tries again.
enum SharedManager {
    private static let made = Locked<ImageManager?>(nil)

    /// The shared manager, made now when there is none yet.
    static func manager() throws(ImageKitError) -> ImageManager {
        do {
            return try made.withLock { made in
                if let made { return made }
                let downloader = try Downloader()
                let cache = try (try? ImageCache()) ?? ImageCache(directory: FileManager.default.temporaryDirectory)
                let manager = ImageManager(cache: cache, downloader: downloader)
                made = manager
                return manager
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }
}
