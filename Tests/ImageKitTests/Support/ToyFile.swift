/// Writes the toy format `ToyCoder` reads: "TOY1", width and height (big-endian UInt32), then
/// straight RGBA bytes.
enum ToyFile {
    static func bytes(width: Int, height: Int, straightRGBA pixels: [UInt8]) -> [UInt8] {
        func field(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        return Array("TOY1".utf8) + field(width) + field(height) + pixels
    }
}
