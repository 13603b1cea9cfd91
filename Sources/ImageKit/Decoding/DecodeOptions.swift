import CImageCore

/// How ``ImageDecoder`` decodes.
public struct DecodeOptions: Sendable, Hashable {
    /// Resource limits.
    public var limits: DecodeLimits
    /// Decode only the first frame of an animation (the default). When false,
    /// every frame is decoded as a fully composited canvas.
    public var firstFrameOnly: Bool
    /// Apply the JPEG EXIF orientation (the default). When false, pixels are returned as stored.
    public var applyOrientation: Bool

    /// The defaults: default limits, first frame only, orientation applied.
    public init(limits: DecodeLimits = DecodeLimits(), firstFrameOnly: Bool = true,
                applyOrientation: Bool = true) {
        self.limits = limits
        self.firstFrameOnly = firstFrameOnly
        self.applyOrientation = applyOrientation
    }

    func cValue(cancelFlag: UnsafePointer<Int32>?) -> ic_decode_options {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        o.limits = limits.cValue
        o.all_frames = firstFrameOnly ? 0 : 1
        o.keep_orientation = applyOrientation ? 0 : 1
        o.cancel_flag = cancelFlag
        return o
    }
}
