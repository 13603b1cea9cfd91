/// Rotates by a multiple of 90°, exactly (pixels are moved, not resampled).
public struct RotationTransformer: ImageTransformer, Hashable {
    /// Quarter turns clockwise, 0…3 (a negative or larger count is reduced modulo 4).
    public let quarterTurns: Int

    /// A transformer rotating by `quarterTurns` × 90° clockwise (−1 is a quarter turn counter-clockwise).
    public init(quarterTurns: Int) {
        self.quarterTurns = ((quarterTurns % 4) + 4) % 4
    }

    /// `rotate(90)`, `rotate(180)`, `rotate(270)` or `rotate(0)`.
    public var key: String { "rotate(\(quarterTurns * 90))" }

    /// The image rotated; every frame of an animation alike.
    public func transform(_ image: Image) throws -> Image {
        switch quarterTurns {
        case 1: try image.oriented(.right)
        case 2: try image.oriented(.down)
        case 3: try image.oriented(.left)
        default: image
        }
    }
}
