import CImageCore

/// Adjusts brightness, contrast and saturation as CSS's `brightness()`, `contrast()` and
/// `saturate()` filters do, in that order.
///
/// On sRGB-encoded values v in 0…1, each step clamped to 0…1: brightness b gives b · v;
/// contrast c gives c · (v − 0.5) + 0.5; saturation s applies the `feColorMatrix` saturate
/// matrix of Filter Effects 1 (weights 0.213, 0.715, 0.072; 0 is grey, above 1
/// oversaturates). 1 leaves an image as it is; each must be within 0…100. Every step is affine
/// in colour and alpha, so it runs on premultiplied pixels (no dark fringes); alpha is kept.
///
/// ```swift
/// let punchy = ColorAdjustTransformer(brightness: 1.1, contrast: 1.2, saturation: 1.3)
/// ```
public struct ColorAdjustTransformer: CancellableImageTransformer, Hashable {
    /// The brightness factor (1: unchanged, 0: black).
    public var brightness: Double
    /// The contrast factor (1: unchanged, 0: mid grey).
    public var contrast: Double
    /// The saturation factor (1: unchanged, 0: grey).
    public var saturation: Double

    /// A transformer applying `brightness`, then `contrast`, then `saturation`.
    public init(brightness: Double = 1, contrast: Double = 1, saturation: Double = 1) {
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
    }

    /// `adjust(brightness=B,contrast=C,saturation=S)`.
    public var key: String {
        "adjust(brightness=\(Operations.keyNumber(brightness)),contrast=\(Operations.keyNumber(contrast)),"
            + "saturation=\(Operations.keyNumber(saturation)))"
    }

    /// The adjusted image; every frame of an animation alike. Fails when a factor is not
    /// within 0…100.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        let limit = Double(IC_COLOR_ADJUST_MAX)
        for (name, value) in [("brightness", brightness), ("contrast", contrast), ("saturation", saturation)] {
            guard value.isFinite, (0...limit).contains(value) else {
                throw ImageKitError.invalidArgument("color adjust: the \(name) \(value) is not within 0...\(Int(limit)) (1 changes nothing)")
            }
        }
        return try Operations.run(cancellation) { cancel, out, err in
            ic_color_adjust(image.raw, brightness, contrast, saturation, cancel, out, err)
        }
    }
}
