/// A rectangle in pixels, origin at the top-left corner.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// The rectangle at (`x`, `y`) of `width` x `height` pixels.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height) at (\(x), \(y))" }
}
