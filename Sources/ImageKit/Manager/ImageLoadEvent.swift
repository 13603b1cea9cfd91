/// What ``ImageManager/images(for:options:context:)`` yields as a load goes on.
public enum ImageLoadEvent: Sendable {
    /// Body bytes received so far.
    case progress(DownloadProgress)
    /// The image as far as the bytes so far decode (``ImageOptions/progressiveLoad``); never
    /// cached.
    case partial(Image)
    /// A ``ImageOptions/refreshCached`` load's cached image; the refreshed one may follow.
    case cached(ImageResult)
    /// The result; the last event.
    case final(ImageResult)
}
