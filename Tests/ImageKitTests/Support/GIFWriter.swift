/// Writes GIF files for tests: any number of images with global or local
/// palettes, offsets, transparency, disposal, delays and interlacing.
///
/// The LZW stream only ever emits literal codes and sends a clear code before
/// the code width would grow, a valid (if large) encoding that shares no code
/// with the decoder under test.
struct GIFWriter {
    struct Frame {
        var left = 0, top = 0, width: Int, height: Int
        /// Palette indices, row-major, `width * height`.
        var indices: [UInt8]
        /// RGB triples; nil uses the global palette.
        var localPalette: [UInt8]? = nil
        var transparentIndex: Int? = nil
        var disposal = 0
        var delayCentiseconds = 0
        var interlaced = false
    }

    var width: Int
    var height: Int
    var globalPalette: [UInt8]?
    var frames: [Frame]
    var loopCount: Int? = nil

    func encode() -> [UInt8] {
        var out = Array("GIF89a".utf8)
        out += le16(width) + le16(height)
        if let globalPalette {
            out += [0x80 | 0x70 | UInt8(Self.sizeBits(globalPalette.count / 3)), 0, 0]
            out += Self.padded(globalPalette)
        } else {
            out += [0x70, 0, 0]
        }
        if let loopCount {
            out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le16(loopCount) + [0]
        }
        for f in frames {
            let transparentFlag: UInt8 = f.transparentIndex == nil ? 0 : 1
            out += [0x21, 0xF9, 4, UInt8(f.disposal << 2) | transparentFlag]
            out += le16(f.delayCentiseconds) + [UInt8(f.transparentIndex ?? 0), 0]
            out += [0x2C] + le16(f.left) + le16(f.top) + le16(f.width) + le16(f.height)
            var flags: UInt8 = f.interlaced ? 0x40 : 0
            if let local = f.localPalette { flags |= 0x80 | UInt8(Self.sizeBits(local.count / 3)) }
            out.append(flags)
            if let local = f.localPalette { out += Self.padded(local) }
            let stored = f.interlaced ? Self.interlace(f.indices, width: f.width, height: f.height) : f.indices
            out += Self.lzw(stored, minCodeSize: 8)
        }
        out.append(0x3B)
        return out
    }

    static func sizeBits(_ colors: Int) -> Int {
        var bits = 0
        while (2 << bits) < colors { bits += 1 }
        return bits
    }

    static func padded(_ palette: [UInt8]) -> [UInt8] {
        let n = 2 << sizeBits(palette.count / 3)
        return palette + [UInt8](repeating: 0, count: n * 3 - palette.count)
    }

    static func interlace(_ rows: [UInt8], width: Int, height: Int) -> [UInt8] {
        var order: [Int] = []
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            order += stride(from: start, to: height, by: step)
        }
        return order.flatMap { rows[($0 * width)..<(($0 + 1) * width)] }
    }

    /// Literal-only LZW with a clear code before the width would grow.
    static func lzw(_ indices: [UInt8], minCodeSize: Int) -> [UInt8] {
        let clear = 1 << minCodeSize
        var bits = BitWriter()
        let width = minCodeSize + 1
        var next = clear + 2
        var firstAfterClear = true
        bits.put(clear, width)
        for index in indices {
            bits.put(Int(index), width)
            // The decoder adds a table entry for every code but the first after a clear.
            if firstAfterClear { firstAfterClear = false } else { next += 1 }
            if next >= (1 << width) - 1 {
                bits.put(clear, width)
                next = clear + 2
                firstAfterClear = true
            }
        }
        bits.put(clear + 1, width)
        let data = bits.finish()
        var out: [UInt8] = [UInt8(minCodeSize)]
        var offset = 0
        while offset < data.count {
            let n = min(255, data.count - offset)
            out.append(UInt8(n))
            out += data[offset..<(offset + n)]
            offset += n
        }
        out.append(0)
        return out
    }
}

/// Packs codes LSB first, as GIF does.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var acc: UInt32 = 0
    private var count = 0

    mutating func put(_ code: Int, _ width: Int) {
        acc |= UInt32(code) << UInt32(count)
        count += width
        while count >= 8 {
            bytes.append(UInt8(acc & 0xFF))
            acc >>= 8
            count -= 8
        }
    }

    mutating func finish() -> [UInt8] {
        if count > 0 { bytes.append(UInt8(acc & 0xFF)) }
        return bytes
    }
}

func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
