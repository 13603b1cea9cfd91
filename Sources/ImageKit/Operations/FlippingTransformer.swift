/// Mirrors the image horizontally, vertically or both (both is a 180° rotation).
public struct FlippingTransformer: ImageTransformer, Hashable {
    /// Mirror left to right.
    public var horizontal: Bool
    /// Mirror top to bottom.
    public var vertical: Bool

    /// A transformer mirroring along the given axes.
    public init(horizontal: Bool = false, vertical: Bool = false) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// `flip(h)`, `flip(v)`, `flip(hv)` or `flip()`.
    public var key: String { "flip(\(horizontal ? "h" : "")\(vertical ? "v" : ""))" }

    /// The image mirrored; every frame of an animation alike.
    public func transform(_ image: Image) throws -> Image {
        switch (horizontal, vertical) {
        case (true, true): try image.oriented(.down)
        case (true, false): try image.oriented(.upMirrored)
        case (false, true): try image.oriented(.downMirrored)
        case (false, false): image
        }
    }
}
