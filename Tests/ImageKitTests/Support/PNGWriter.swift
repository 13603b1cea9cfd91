/// Writes PNG files of any colour type, bit depth and interlacing, for tests.
///
/// The zlib stream uses stored (uncompressed) deflate blocks, so the writer is
/// small and independent of libpng: the decoder under test and the writer
/// share no code.
struct PNGWriter {
    /// PNG colour types.
    enum ColorType: UInt8 {
        case gray = 0, rgb = 2, palette = 3, grayAlpha = 4, rgba = 6

        var channels: Int {
            switch self {
            case .gray, .palette: 1
            case .grayAlpha: 2
            case .rgb: 3
            case .rgba: 4
            }
        }
    }

    var width: Int
    var height: Int
    var colorType: ColorType
    var bitDepth: Int
    /// Samples, `width * height * channels`, each below 2^bitDepth (palette indices for .palette).
    var samples: [UInt16]
    /// RGB triples for .palette.
    var palette: [UInt8] = []
    /// Raw tRNS chunk contents, if any.
    var trns: [UInt8]? = nil
    var interlaced = false
    /// Chunks written between IHDR and IDAT (type, data).
    var chunksBeforeData: [(String, [UInt8])] = []
    /// Chunks written after IDAT, before IEND.
    var chunksAfterData: [(String, [UInt8])] = []
    /// Omit IEND.
    var omitEnd = false

    func encode() -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var ihdr = be32(UInt32(width)) + be32(UInt32(height))
        ihdr += [UInt8(bitDepth), colorType.rawValue, 0, 0, interlaced ? 1 : 0]
        out += Self.chunk("IHDR", ihdr)
        if colorType == .palette { out += Self.chunk("PLTE", palette) }
        if let trns { out += Self.chunk("tRNS", trns) }
        for (type, data) in chunksBeforeData { out += Self.chunk(type, data) }
        out += Self.chunk("IDAT", Self.zlibStored(rawData()))
        for (type, data) in chunksAfterData { out += Self.chunk(type, data) }
        if !omitEnd { out += Self.chunk("IEND", []) }
        return out
    }

    /// Filtered scanlines (filter 0), pass by pass when interlaced.
    func rawData() -> [UInt8] {
        guard interlaced else { return scanlines(xs: Array(0..<width), ys: Array(0..<height)) }
        let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        var data: [UInt8] = []
        for (x0, y0, dx, dy) in passes {
            let xs = Array(stride(from: x0, to: width, by: dx))
            let ys = Array(stride(from: y0, to: height, by: dy))
            if xs.isEmpty || ys.isEmpty { continue }
            data += scanlines(xs: xs, ys: ys)
        }
        return data
    }

    private func scanlines(xs: [Int], ys: [Int]) -> [UInt8] {
        let ch = colorType.channels
        var data: [UInt8] = []
        for y in ys {
            data.append(0)
            var bits = BitPacker()
            for x in xs {
                for c in 0..<ch {
                    let v = samples[(y * width + x) * ch + c]
                    if bitDepth == 16 {
                        bits.bytes += [UInt8(v >> 8), UInt8(v & 0xFF)]
                    } else {
                        bits.put(UInt32(v), bits: bitDepth)
                    }
                }
            }
            data += bits.finish()
        }
        return data
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return be32(UInt32(data.count)) + typeBytes + data + be32(CRC32.checksum(typeBytes + data))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, data.count - offset)
            let last: UInt8 = offset + n == data.count ? 1 : 0
            out += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + be32(b << 16 | a)
    }
}

/// Packs samples of fewer than 8 bits MSB first.
private struct BitPacker {
    var bytes: [UInt8] = []
    private var acc: UInt32 = 0
    private var count = 0

    mutating func put(_ value: UInt32, bits: Int) {
        acc = acc << UInt32(bits) | value
        count += bits
        while count >= 8 {
            count -= 8
            bytes.append(UInt8((acc >> UInt32(count)) & 0xFF))
        }
    }

    mutating func finish() -> [UInt8] {
        if count > 0 { bytes.append(UInt8((acc << UInt32(8 - count)) & 0xFF)) }
        count = 0
        return bytes
    }
}

func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

/// CRC-32 as PNG uses it.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
