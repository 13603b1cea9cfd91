import CImageCore

/// Tints the image with a colour — SDWebImage's `SDImageTintTransformer`.
///
/// The colour is drawn over the image in source-atop mode: the image's alpha is kept, and its
/// colour is replaced by the tint where the tint is opaque, mixed with it by the tint's
/// opacity otherwise (out = tint · opacity · alpha + image · (1 − opacity), on premultiplied
/// pixels, where the mode is linear). An opaque tint turns the image into a silhouette of its
/// alpha, as for template icons. Every frame of an animation is tinted alike. (Recent
/// SDWebImage releases take a blend mode whose default is source-in, which also multiplies the
/// alpha by the tint's; only source-atop is offered here.)
///
/// ```swift
/// let icon = TintTransformer(color: RGBColor(red: 0, green: 122, blue: 255))
/// let wash = TintTransformer(color: .black, opacity: 0.3)
/// ```
public struct TintTransformer: CancellableImageTransformer, Hashable {
    /// The tint colour.
    public var color: RGBColor
    /// The tint's opacity, 0…1 (0 changes nothing, 1 replaces every colour).
    public var opacity: Double

    /// A transformer drawing `color` with `opacity` over the image in source-atop mode.
    public init(color: RGBColor, opacity: Double = 1) {
        self.color = color
        self.opacity = opacity
    }

    /// The opacity as the 8-bit alpha the operation uses.
    private var alpha: UInt8 { UInt8((opacity * 255).rounded()) }

    /// Whether the opacity is one ``transform(_:)`` accepts.
    private var opacityIsValid: Bool { opacity.isFinite && (0...1).contains(opacity) }

    /// `tint(#rrggbbaa)`: the colour with the opacity as an 8-bit alpha (the precision the
    /// operation uses, so opacities that tint alike share a key); `tint(#rrggbb,opacity=X)`
    /// for an opacity the transform refuses.
    public var key: String {
        opacityIsValid
            ? "tint(\(Operations.keyColor(color, alpha: alpha)))"
            : "tint(\(Operations.keyColor(color)),opacity=\(Operations.keyNumber(opacity)))"
    }

    /// The tinted image; fails when the opacity is not within 0…1.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard opacityIsValid else {
            throw ImageKitError.invalidArgument("tint: the opacity \(opacity) is not within 0...1")
        }
        let rgba: [UInt8] = [color.red, color.green, color.blue, alpha]
        return try Operations.run(cancellation) { cancel, out, err in ic_tint(image.raw, rgba, cancel, out, err) }
    }
}
