/// Resizes to a box: fit inside it, fill it (keeping the part a gravity names) or stretch to
/// it; optionally sharpens the result of a downscale, as image servers offer.
public struct ResizingTransformer: CancellableImageTransformer, Hashable {
    /// How the image is resized.
    public var resizer: ImageResizer
    /// The unsharp mask applied when the resize made the image smaller (either side shorter
    /// than the source's); `nil`: none. Upscales and same-size results are not sharpened.
    public var sharpen: SharpenTransformer?

    /// A transformer resizing to `size` with `mode` (see ``ImageResizer``), a fill keeping the
    /// part `gravity` names, then applying `sharpen` when that was a downscale.
    public init(size: PixelSize, mode: ImageResizer.Mode = .fit, gravity: Gravity = .center,
                allowUpscale: Bool = true, sharpen: SharpenTransformer? = nil) {
        resizer = ImageResizer(size: size, mode: mode, gravity: gravity, allowUpscale: allowUpscale)
        self.sharpen = sharpen
    }

    /// `resize(WxH,mode[,gravity][,noupscale])`, with `,sharpen(…)` (``SharpenTransformer/key``)
    /// before the closing parenthesis when ``sharpen`` is set. The gravity's key
    /// (``Gravity/key``) appears only for a fill placed anywhere but the centre, so without
    /// gravity and sharpening the key is as it always was.
    public var key: String {
        let mode: String
        switch resizer.mode {
        case .fit: mode = "fit"
        case .fill: mode = "fill"
        case .stretch: mode = "stretch"
        }
        let gravity = resizer.mode == .fill && resizer.gravity != .center ? ",\(resizer.gravity.key)" : ""
        let sharpening = sharpen.map { ",\($0.key)" } ?? ""
        return "resize(\(resizer.size.width)x\(resizer.size.height),\(mode)\(gravity)\(resizer.allowUpscale ? "" : ",noupscale")\(sharpening))"
    }

    /// The image resized, then sharpened if it got smaller and ``sharpen`` is set; every frame
    /// of an animation alike. The resize runs to its end; a smart fill's choice of window and
    /// the sharpen stop once `cancellation` is cancelled.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        let resized = try resizer.resize(image, cancellation: cancellation)
        guard let sharpen, resized.width < image.width || resized.height < image.height else { return resized }
        return try sharpen.transform(resized, cancellation: cancellation)
    }
}
