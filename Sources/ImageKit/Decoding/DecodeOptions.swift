import CImageCore

/// How ``ImageDecoder`` decodes.
public struct DecodeOptions: Sendable, Hashable {
    /// Resource limits.
    public var limits: DecodeLimits
    /// Decode only the first frame of an animation (the default). When false,
    /// every frame is decoded as a fully composited canvas (GIF, animated WebP, APNG and
    /// JPEG XL; an APNG's IDAT image outside its animation is not one of them). HEIF decodes
    /// its primary image only.
    public var firstFrameOnly: Bool
    /// Apply the EXIF orientation of a JPEG (APP1), PNG (an eXIf chunk before the image data) or
    /// WebP (EXIF chunk), a HEIF's `irot`/`imir` (libheif applies them; an EXIF block in a HEIF is
    /// not applied on top) or a JPEG XL's orientation (libjxl applies it) — the default. When
    /// false, pixels are returned as stored (for HEIF, libheif then leaves out the `clap` crop too).
    public var applyOrientation: Bool
    /// Shrink on load to this box (pixels of the upright picture; a side of 0 is
    /// unconstrained). `nil` (the default) decodes at full size.
    ///
    /// JPEG shrinks in the IDCT (1/2, 1/4, 1/8) and opaque WebP in libwebp's
    /// scaler; every format then streams its rows through one high-quality
    /// resampler, so the full-size bitmap is never held — except for interlaced
    /// PNG and GIF, WebP with alpha, and the frames of animations, which need a
    /// full-size frame while decoding (still within ``DecodeLimits``).
    public var thumbnailPixelSize: PixelSize?
    /// With a thumbnail size, how the picture is brought to the box:
    /// ``ImageResizer/Mode/fit`` (the default) fits it inside, keeping the aspect
    /// ratio; ``ImageResizer/Mode/fill`` fills the box exactly, scaling to cover it
    /// and cropping the centre; ``ImageResizer/Mode/stretch`` scales each axis to
    /// the box. A side of 0 in the box follows the other side in every mode.
    public var thumbnailMode: ImageResizer.Mode
    /// With ``ImageResizer/Mode/fill`` and both sides of the box: which part of the upright
    /// picture is kept (default ``Gravity/center``, cut in the source before resampling). Any
    /// other gravity resamples to cover the box and cuts the window from that; ``Gravity/smart``
    /// picks it by attention in the covering thumbnail.
    public var thumbnailGravity: Gravity
    /// Let a thumbnail be larger than the source. Default `false`.
    public var allowUpscale: Bool
    /// If a decoded frame would exceed this many bytes (width × height × 4),
    /// scale it down, keeping the aspect ratio, until it fits. `nil`: no limit.
    public var scaleDownLimitBytes: Int?
    /// Let the decode run part of its work on one helper thread of its own: lossy WebP then
    /// filters, scales and converts colours on a second thread (libwebp's `use_threads`), and a
    /// full-size decode of an image with an ICC profile converts its rows to sRGB on a second
    /// thread while the codec decodes the next ones (pixels identical to one thread's), and a
    /// full-size decode of a large (2 MP or more) sequential JPEG without one decodes its bottom
    /// third on a second thread (about a third more CPU time, as that thread skips the rows above
    /// it; same pixels and failures; ``ImageManager``'s decodes give the band back when another
    /// job arrives during the skip), and a
    /// thumbnail of a large (1 MP or more read) still resamples on a second thread: a frame the
    /// codec hands over whole (JPEG XL, HEIF, Adam7 PNG, APNG, GIF, WebP decoded in one step) in
    /// two bands of output rows, a WebP decoded in steps row by row as libwebp finishes them
    /// (same pixels; the second scaler counts against ``DecodeLimits/maxMemoryBytes`` and is
    /// done without when over). It shortens a lone decode for more CPU time. Default `false` — a caller
    /// whose cores are all busy would lose throughput; ``ImageManager`` turns it on for a
    /// decode only while its other workers are idle
    /// (``ImageManagerConfiguration/decodeHelperThreadWhenIdle``).
    public var usesHelperThread: Bool
    /// What happens to an embedded ICC profile: ``ColorMode/sRGB`` (the default) converts
    /// tagged images to sRGB, ``ColorMode/raw`` keeps the source's values.
    public var colorMode: ColorMode

    /// The defaults: default limits, first frame only, orientation applied, full size, sRGB.
    public init(limits: DecodeLimits = DecodeLimits(), firstFrameOnly: Bool = true,
                applyOrientation: Bool = true, thumbnailPixelSize: PixelSize? = nil,
                thumbnailMode: ImageResizer.Mode = .fit, thumbnailGravity: Gravity = .center,
                allowUpscale: Bool = false,
                scaleDownLimitBytes: Int? = nil, usesHelperThread: Bool = false,
                colorMode: ColorMode = .sRGB) {
        self.limits = limits
        self.firstFrameOnly = firstFrameOnly
        self.applyOrientation = applyOrientation
        self.thumbnailPixelSize = thumbnailPixelSize
        self.thumbnailMode = thumbnailMode
        self.thumbnailGravity = thumbnailGravity
        self.allowUpscale = allowUpscale
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.usesHelperThread = usesHelperThread
        self.colorMode = colorMode
    }

    /// The thumbnail's cache-key suffix: the mode's, then `-` and the gravity's key for a fill
    /// placed anywhere but the centre (so keys made before gravity existed stay valid).
    var thumbnailKeySuffix: String {
        thumbnailMode.keySuffix + (thumbnailMode == .fill && thumbnailGravity != .center ? "-\(thumbnailGravity.key)" : "")
    }

    /// The C options, with the decode's cancellation flag and, for the manager's decodes, its
    /// worker pool's helper-yield flag.
    func cValue(cancelFlag: UnsafePointer<Int32>?, helperYieldFlag: UnsafePointer<Int32>? = nil) -> ic_decode_options {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        o.limits = limits.cValue
        o.all_frames = firstFrameOnly ? 0 : 1
        o.keep_orientation = applyOrientation ? 0 : 1
        o.cancel_flag = cancelFlag
        if let size = thumbnailPixelSize {
            o.thumbnail_width = UInt32(clamping: max(0, size.width))
            o.thumbnail_height = UInt32(clamping: max(0, size.height))
        }
        o.thumbnail_mode = thumbnailMode.cValue
        o.thumbnail_gravity = thumbnailGravity.cValue ?? ic_gravity(kind: IC_GRAVITY_CENTRE, x: 0.5, y: 0.5)
        o.thumbnail_smart = thumbnailGravity == .smart ? 1 : 0
        o.allow_upscale = allowUpscale ? 1 : 0
        o.scale_down_limit_bytes = UInt64(max(0, scaleDownLimitBytes ?? 0))
        o.use_helper_thread = usesHelperThread ? 1 : 0
        o.helper_yield_flag = helperYieldFlag
        o.color_mode = colorMode.cValue
        return o
    }
}
