/// The chunks of a PNG file, for tests and benchmarks that take PNGs apart and put them
/// together again (APNG assembly, damaged chunks).
public enum PNGChunks {
    /// Each chunk's type and data, in file order, after the 8-byte signature; a chunk that
    /// does not fit in `png` ends the list. CRCs are neither checked nor returned.
    public static func parse(_ png: [UInt8]) -> [(type: String, data: [UInt8])] {
        var out: [(type: String, data: [UInt8])] = []
        var i = 8
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            guard length <= png.count - i - 12 else { break }
            out.append((String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self), Array(png[(i + 8)..<(i + 8 + length)])))
            i += 12 + length
        }
        return out
    }
}
