import ImageKitTestSupport
/// Puts PNG files of one size together as an APNG, for benchmark inputs: the first
/// file's IDAT is frame 0, the others' IDAT data become fdAT frames, every frame
/// covering the canvas and blended over it (blend_op 1), 100 ms each, looping forever.
enum APNGAssembler {
    static func assemble(_ pngs: [[UInt8]], width: Int, height: Int) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let first = PNGChunks.parse(pngs[0])
        out += chunk("IHDR", first.first { $0.type == "IHDR" }!.data)
        out += chunk("acTL", be32(pngs.count) + be32(0))
        var sequence = 0
        for (index, png) in pngs.enumerated() {
            out += chunk("fcTL", be32(sequence) + be32(width) + be32(height) + be32(0) + be32(0)
                + [0, 1, 0, 10, 0, 1])
            sequence += 1
            for c in PNGChunks.parse(png) where c.type == "IDAT" {
                if index == 0 {
                    out += chunk("IDAT", c.data)
                } else {
                    out += chunk("fdAT", be32(sequence) + c.data)
                    sequence += 1
                }
            }
        }
        return out + chunk("IEND", [])
    }

    private static func be32(_ v: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8),
         UInt8(truncatingIfNeeded: v)]
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for b in body { crc = crcTable[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        return be32(data.count) + body + be32(Int(crc ^ 0xFFFF_FFFF))
    }
}
