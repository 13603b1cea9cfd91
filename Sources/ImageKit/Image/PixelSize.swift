/// A size in pixels. In a thumbnail box a side of 0 means "unconstrained".
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size of `width` x `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// A square box of `side` x `side` pixels.
    public init(square side: Int) {
        self.init(width: side, height: side)
    }

    public var description: String { "\(width)x\(height)" }
}
