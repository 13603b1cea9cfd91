/// Resizes to a box: fit inside it, fill it (cropping the centre) or stretch to it.
public struct ResizingTransformer: ImageTransformer, Hashable {
    /// How the image is resized.
    public var resizer: ImageResizer

    /// A transformer resizing to `size` with `mode` (see ``ImageResizer``).
    public init(size: PixelSize, mode: ImageResizer.Mode = .fit, allowUpscale: Bool = true) {
        resizer = ImageResizer(size: size, mode: mode, allowUpscale: allowUpscale)
    }

    /// `resize(WxH,mode[,noupscale])`.
    public var key: String {
        let mode: String
        switch resizer.mode {
        case .fit: mode = "fit"
        case .fill: mode = "fill"
        case .stretch: mode = "stretch"
        }
        return "resize(\(resizer.size.width)x\(resizer.size.height),\(mode)\(resizer.allowUpscale ? "" : ",noupscale"))"
    }

    /// The image resized; every frame of an animation alike.
    public func transform(_ image: Image) throws -> Image {
        try resizer.resize(image)
    }
}
