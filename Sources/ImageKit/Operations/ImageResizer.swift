import CImageCore

/// Resizes and crops decoded images.
///
/// Resampling works on premultiplied pixels (no dark fringes around
/// transparency): exact area averaging for large reductions, then Lanczos-3 to
/// the exact size. Every frame of an animation is resized alike. The work is
/// CPU-bound and runs on the calling thread (and, with ``usesHelperThread``, on
/// one helper thread beside it).
public struct ImageResizer: Sendable, Hashable {
    /// How the picture is brought to ``size``.
    public enum Mode: Sendable, Hashable {
        /// Fit inside the box, keeping the aspect ratio.
        case fit
        /// Fill the box exactly, keeping the aspect ratio: scale to cover, then keep the part
        /// ``ImageResizer/gravity`` names (the centre by default).
        case fill
        /// Scale each axis to the box (the aspect ratio changes).
        case stretch

        var cValue: ic_resize_mode {
            switch self {
            case .fit: IC_RESIZE_FIT
            case .fill: IC_RESIZE_FILL
            case .stretch: IC_RESIZE_STRETCH
            }
        }

        /// What a thumbnail in this mode adds to a cache key (nothing for the default, so keys
        /// made before the mode existed stay valid).
        var keySuffix: String {
            switch self {
            case .fit: ""
            case .fill: "-fill"
            case .stretch: "-stretch"
            }
        }
    }

    /// The target box; a side of 0 follows the aspect ratio.
    public var size: PixelSize
    /// How the picture is brought to the box.
    public var mode: Mode
    /// With ``Mode/fill`` and both sides of the box: which part of the picture is kept. Compass
    /// points and focal points place the window in the source before resampling;
    /// ``Gravity/smart`` resizes to cover the box, then cuts the window with the most interest
    /// (see ``CroppingTransformer/init(size:gravity:)``). Default ``Gravity/center``.
    public var gravity: Gravity
    /// Whether the result may be larger than the source. Default `true`: a
    /// resize is an explicit request for that size.
    public var allowUpscale: Bool
    /// Whether a large still (a million input pixels or more) may be resized on the calling
    /// thread and one helper thread of its own, in bands of output rows: lower latency when a
    /// core is idle (a lone job), for a few per cent more CPU time. The pixels are the same
    /// either way. Default `false`: under load a second thread only takes a core from other work.
    public var usesHelperThread: Bool

    /// A resizer to `size` with `mode`, a fill keeping the part `gravity` names.
    public init(size: PixelSize, mode: Mode = .fit, gravity: Gravity = .center, allowUpscale: Bool = true,
                usesHelperThread: Bool = false) {
        self.size = size
        self.mode = mode
        self.gravity = gravity
        self.allowUpscale = allowUpscale
        self.usesHelperThread = usesHelperThread
    }

    /// Returns `image` resized; every frame of an animation alike.
    public func resize(_ image: Image) throws -> Image {
        try resize(image, cancellation: DecodeCancellation())
    }

    /// Returns `image` resized; a smart fill's choice of window stops once `cancellation` is
    /// cancelled (the resize runs to its end).
    public func resize(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard size.width >= 0, size.height >= 0, size.width > 0 || size.height > 0 else {
            throw ImageKitError.invalidArgument("resize: the target size \(size) is empty")
        }
        try gravity.validate("resize")
        let width = UInt32(clamping: size.width), height = UInt32(clamping: size.height)
        let upscale: Int32 = allowUpscale ? 1 : 0, helper: Int32 = usesHelperThread ? 1 : 0
        if mode == .fill, gravity == .smart, width > 0, height > 0 {
            return try Operations.run(cancellation) { cancel, out, err in
                ic_fill_smart(image.raw, width, height, upscale, helper, cancel, out, err)
            }
        }
        var placement = gravity.cValue ?? Gravity.center.cValue!
        return try Operations.run(cancellation) { _, out, err in
            ic_resize_placed(image.raw, width, height, mode.cValue, upscale, helper, &placement, out, err)
        }
    }

    /// Returns the part of `image` inside `rect`, which must lie within the image.
    public static func crop(_ image: Image, to rect: PixelRect) throws -> Image {
        guard rect.x >= 0, rect.y >= 0, rect.width > 0, rect.height > 0,
              rect.x + rect.width <= image.width, rect.y + rect.height <= image.height
        else {
            throw ImageKitError.invalidArgument(
                "crop: rectangle \(rect) is not inside the \(image.width)x\(image.height) image")
        }
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = ic_crop(image.raw, UInt32(rect.x), UInt32(rect.y), UInt32(rect.width), UInt32(rect.height),
                         &out, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        return Image(taking: out)
    }
}
