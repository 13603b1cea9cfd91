/// Keeps one rectangle of the image.
public struct CroppingTransformer: ImageTransformer, Hashable {
    /// The rectangle to keep; it must lie inside the image.
    public var rect: PixelRect

    /// A transformer keeping `rect`.
    public init(rect: PixelRect) {
        self.rect = rect
    }

    /// `crop(x,y,WxH)`.
    public var key: String { "crop(\(rect.x),\(rect.y),\(rect.width)x\(rect.height))" }

    /// The part of `image` inside ``rect``; fails when the rectangle is not inside the image.
    public func transform(_ image: Image) throws -> Image {
        try ImageResizer.crop(image, to: rect)
    }
}
