import CImageCore

/// What one decode cost.
public struct DecodeStatistics: Sendable, Hashable {
    /// Peak bytes held by ImageKit's own buffers during the decode (output,
    /// resampler, staging frames, libpng's allocations; not libjpeg's or libwebp's
    /// internal working memory).
    public var peakBytes: Int
    /// The size the codec produced before resampling (after JPEG's DCT scaling or
    /// libwebp's scaler); equal to the output size when nothing was resampled.
    public var codecSize: PixelSize

    /// Zeroed statistics, to be filled by a decode.
    public init() {
        peakBytes = 0
        codecSize = PixelSize(width: 0, height: 0)
    }

    init(_ c: ic_decode_stats) {
        peakBytes = Int(clamping: c.peak_bytes)
        codecSize = PixelSize(width: Int(c.codec_width), height: Int(c.codec_height))
    }
}
