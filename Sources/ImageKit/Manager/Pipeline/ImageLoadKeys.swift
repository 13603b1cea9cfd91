#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where one load's results live in the caches, and what the decoder is asked for: all a
/// memory hit needs, computed before (and without) the rest of a ``LoadPlan``.
struct ImageLoadKeys: Sendable {
    /// The URL's key (or the cache key filter's): where the original bytes are stored.
    let baseKey: String
    /// ``baseKey`` plus the processing signature: where the decoded image is stored.
    let key: String
    /// ``key`` plus the encoding: where the encoded variant is stored (nil without an output).
    let variantKey: String?
    let decodeOptions: DecodeOptions

    init(url: URL, urlString: String, output: OutputFormat?, options: ImageOptions, context: ImageContext,
         configuration: ImageManagerConfiguration) {
        baseKey = context.cacheKeyFilter?(url) ?? urlString
        decodeOptions = Self.decodeOptions(options, context, configuration)
        (key, variantKey) = Self.keys(base: baseKey, decodeOptions, context.imageTransformer,
                                      transformsAnimations: options.contains(.transformAnimatedImage), output: output)
    }

    /// What the decoder is asked for: thumbnail, scale-down limit, frames, colour mode.
    static func decodeOptions(_ options: ImageOptions, _ context: ImageContext,
                              _ configuration: ImageManagerConfiguration) -> DecodeOptions {
        let allFrames = options.contains(.preloadAllFrames) && !options.contains(.decodeFirstFrameOnly)
        let scaleDown = context.scaleDownLimitBytes
            ?? (options.contains(.scaleDownLargeImages) ? configuration.scaleDownLimitBytes : nil)
        return DecodeOptions(limits: configuration.decodeLimits, firstFrameOnly: !allFrames,
                             thumbnailPixelSize: context.thumbnailPixelSize,
                             thumbnailMode: context.thumbnailMode, thumbnailGravity: context.thumbnailGravity,
                             scaleDownLimitBytes: scaleDown, colorMode: context.colorMode)
    }

    /// `base`, followed by a signature of the processing when there is any, so that images
    /// decoded or transformed differently never share a cache entry; and with `output`, the
    /// variant's key: that key followed by the encoding.
    static func keys(base: String, _ decode: DecodeOptions, _ transformer: (any ImageTransformer)?,
                     transformsAnimations: Bool, output: OutputFormat?) -> (key: String, variantKey: String?) {
        var key = base
        if let size = decode.thumbnailPixelSize {
            key += "|thumbnail=\(size.width)x\(size.height)" + decode.thumbnailKeySuffix
        }
        if let limit = decode.scaleDownLimitBytes { key += "|max-bytes=\(limit)" }
        if !decode.firstFrameOnly { key += "|all-frames" }
        if decode.colorMode == .raw { key += "|color=raw" }
        if let transformer {
            key += "|transform=" + transformer.key + (transformsAnimations && !decode.firstFrameOnly ? "+animated" : "")
        }
        return (key, output.map { key + "|encode=" + $0.cacheKey })
    }
}
