import ImageKit

extension ImageManager {
    /// A manager over `cache` (any ``ImageKit/ImageCaching`` cache) and a new downloader, both
    /// configured as given and observed by `observability` (logs, metrics, spans).
    ///
    /// - Throws: ``ImageKit/ImageKitError`` when the downloader's network thread cannot start.
    public convenience init(cache: any ImageCaching, observability: ImageKitObservability,
                            configuration: ImageManagerConfiguration = ImageManagerConfiguration(),
                            downloaderConfiguration: DownloaderConfiguration = DownloaderConfiguration()) throws {
        let downloader = try Downloader(configuration: observability.instrument(downloaderConfiguration))
        self.init(cache: cache, downloader: downloader, configuration: observability.instrument(configuration))
    }
}
