/// Resizes to a box: fit inside it, fill it (cropping the centre) or stretch to it; optionally
/// sharpens the result of a downscale, as image servers offer.
public struct ResizingTransformer: CancellableImageTransformer, Hashable {
    /// How the image is resized.
    public var resizer: ImageResizer
    /// The unsharp mask applied when the resize made the image smaller (either side shorter
    /// than the source's); `nil`: none. Upscales and same-size results are not sharpened.
    public var sharpen: SharpenTransformer?

    /// A transformer resizing to `size` with `mode` (see ``ImageResizer``), then applying
    /// `sharpen` when that was a downscale.
    public init(size: PixelSize, mode: ImageResizer.Mode = .fit, allowUpscale: Bool = true,
                sharpen: SharpenTransformer? = nil) {
        resizer = ImageResizer(size: size, mode: mode, allowUpscale: allowUpscale)
        self.sharpen = sharpen
    }

    /// `resize(WxH,mode[,noupscale])`, with `,sharpen(…)` (``SharpenTransformer/key``) before
    /// the closing parenthesis when ``sharpen`` is set; without it the key is as it always was.
    public var key: String {
        let mode: String
        switch resizer.mode {
        case .fit: mode = "fit"
        case .fill: mode = "fill"
        case .stretch: mode = "stretch"
        }
        let sharpening = sharpen.map { ",\($0.key)" } ?? ""
        return "resize(\(resizer.size.width)x\(resizer.size.height),\(mode)\(resizer.allowUpscale ? "" : ",noupscale")\(sharpening))"
    }

    /// The image resized, then sharpened if it got smaller and ``sharpen`` is set; every frame
    /// of an animation alike. The resize runs to its end; the sharpen stops once
    /// `cancellation` is cancelled.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        let resized = try resizer.resize(image)
        guard let sharpen, resized.width < image.width || resized.height < image.height else { return resized }
        return try sharpen.transform(resized, cancellation: cancellation)
    }
}
