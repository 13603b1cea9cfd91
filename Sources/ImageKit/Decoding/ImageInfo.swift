import CImageCore

/// Facts about an encoded image read from its headers alone, without decoding pixels.
public struct ImageInfo: Sendable, Hashable {
    /// The detected format.
    public var format: ImageFormat
    /// Width as stored (the canvas, for animations).
    public var width: Int
    /// Height as stored (the canvas, for animations).
    public var height: Int
    /// Number of frames (1 for stills).
    public var frameCount: Int
    /// EXIF orientation (1…8; 1 when absent).
    public var orientation: Int
    /// Whether the format declares an alpha channel or a transparent colour.
    public var hasAlpha: Bool
    /// Bits per sample as stored.
    public var bitDepth: Int
    /// Progressive JPEG, or interlaced PNG/GIF.
    public var isProgressive: Bool
    /// The colour space of the embedded ICC profile; nil when there is none.
    public var iccProfileSpace: ICCColorSpace?
    /// Size of the embedded ICC profile in bytes (0 when there is none).
    public var iccProfileSize: Int

    init(_ c: ic_info) {
        format = ImageFormat(cValue: c.format)
        width = Int(c.width)
        height = Int(c.height)
        frameCount = Int(c.frame_count)
        orientation = Int(c.orientation)
        hasAlpha = c.has_alpha != 0
        bitDepth = Int(c.bit_depth)
        isProgressive = c.is_progressive != 0
        iccProfileSpace = c.has_icc_profile != 0 ? ICCColorSpace(cValue: UInt32(c.icc_space)) ?? .other : nil
        iccProfileSize = Int(c.icc_size)
    }
}
