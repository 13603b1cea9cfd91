/// The encoding an ``ImageManager`` load hands back (and caches) its result in: one format,
/// or one chosen per image and client.
///
/// ```swift
/// // In a request handler: WebP for clients that accept it, else JPEG (PNG for transparency).
/// let format = OutputFormat.negotiate(accept: request.headers[.accept])
/// let result = try await manager.encodedImage(for: url, as: format, context: context)
/// ```
public enum OutputFormat: Sendable, Hashable {
    /// Always this format.
    case fixed(EncodeFormat)
    /// Lossy WebP at `quality` when the client accepts WebP; otherwise JPEG at `quality` for
    /// opaque images and PNG for images with transparency.
    case negotiated(acceptsWebP: Bool, quality: Int)

    /// The format for a client that sent `accept` (an HTTP `Accept` header): WebP when it
    /// names `image/webp` with a non-zero quality value, else JPEG or PNG by transparency.
    /// Wildcards (`*/*`, `image/*`) do not count as accepting WebP: clients that decode it
    /// say so, and a client that does not gets a format it certainly reads.
    public static func negotiate(accept: String?, quality: Int = 80) -> OutputFormat {
        .negotiated(acceptsWebP: accept.map(acceptsWebP) ?? false, quality: quality)
    }

    /// The concrete format `image` is encoded in.
    public func encodeFormat(for image: Image) -> EncodeFormat {
        switch self {
        case .fixed(let format):
            format
        case .negotiated(let webp, let quality):
            webp ? .webp(quality: quality) : image.isOpaque ? .jpeg(quality: quality) : .png()
        }
    }

    /// Whether responses in this format depend on the request's `Accept` header (a server
    /// sends `Vary: Accept` with them).
    public var variesWithAccept: Bool {
        if case .negotiated = self { true } else { false }
    }

    /// The part of a cache key that tells variants apart.
    var cacheKey: String {
        switch self {
        case .fixed(let format): format.cacheKey
        case .negotiated(let webp, let quality): webp ? "auto-webp-q\(quality)" : "auto-jpeg-png-q\(quality)"
        }
    }

    private static func acceptsWebP(_ header: String) -> Bool {
        // Spaces are not significant inside media ranges and their parameters.
        let compact = String(header.lowercased().unicodeScalars.filter { $0 != " " && $0 != "\t" })
        return compact.split(separator: ",").contains { range in
            let parts = range.split(separator: ";")
            guard parts.first == "image/webp" else { return false }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return (q ?? 1) > 0
        }
    }
}
