import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How ``ByteTierImageCache`` keeps an entry's kind and metadata with its bytes in a
/// ``ByteCacheTier``: the payload first, then the metadata, then a fixed footer. The payload
/// comes first so that reading it back shares the stored buffer instead of copying it.
///
/// ```
/// payload | expires i64 | etag | lastModified | userData | width u32 | height u32
///         | checksum u64 | metadataLength u32 | kind u8 | version u8 | "IKBT"
/// ```
/// Integers are little-endian; each optional field is a u32 length (`0xFFFFFFFF`: absent)
/// followed by its bytes; `expires` is milliseconds since 1970 (`Int64.min`: none); width and
/// height are a variant's pixel size (0 × 0 when unknown, as for original bytes); the checksum is
/// the XXH64 of everything before it, so a torn or damaged value (a shared store written by
/// several nodes, a network) reads as no envelope rather than as other bytes.
enum ByteTierEnvelope {
    static let magic: [UInt8] = Array("IKBT".utf8)
    /// 2: the pixel size and the checksum were added.
    static let version: UInt8 = 2
    /// checksum, metadataLength, kind, version, magic.
    static let footerSize = 8 + 4 + 1 + 1 + 4

    /// What an envelope holds.
    struct Contents {
        var payload: Data
        var kind: ImageCacheEntryKind
        var metadata: DiskCacheMetadata
        /// A variant's size in pixels; nil when the writer did not know it.
        var pixelSize: PixelSize?
    }

    /// `payload` with `kind`, `metadata` and `pixelSize` (a variant's) after it.
    static func wrap(_ payload: Data, kind: ImageCacheEntryKind, metadata: DiskCacheMetadata,
                     pixelSize: PixelSize? = nil) -> Data {
        var tail: [UInt8] = []
        let expires = metadata.expires.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? Int64.min
        append(UInt64(bitPattern: expires), bytes: 8, to: &tail)
        for field in [metadata.etag.map { Data($0.utf8) }, metadata.lastModified.map { Data($0.utf8) },
                      metadata.userData] {
            if let field {
                append(UInt64(field.count), bytes: 4, to: &tail)
                tail.append(contentsOf: field)
            } else {
                append(UInt64(UInt32.max), bytes: 4, to: &tail)
            }
        }
        append(UInt64(pixelSize.map { max(0, $0.width) } ?? 0), bytes: 4, to: &tail)
        append(UInt64(pixelSize.map { max(0, $0.height) } ?? 0), bytes: 4, to: &tail)
        let metadataLength = tail.count
        var data = Data(capacity: payload.count + tail.count + footerSize)
        data.append(payload)
        data.append(contentsOf: tail)
        var footer: [UInt8] = []
        append(checksum(data), bytes: 8, to: &footer)
        append(UInt64(metadataLength), bytes: 4, to: &footer)
        footer.append(code(kind))
        footer.append(version)
        footer.append(contentsOf: magic)
        data.append(contentsOf: footer)
        return data
    }

    /// The contents of `data`, or nil when it is not an envelope of this version (damaged,
    /// truncated, or written by something else).
    static func unwrap(_ data: Data) -> Contents? {
        guard data.count >= footerSize else { return nil }
        let bytes = [UInt8](data.suffix(footerSize))
        guard Array(bytes[14..<18]) == magic, bytes[13] == version, let kind = kind(bytes[12]) else { return nil }
        let metadataLength = Int(read(bytes, at: 8, bytes: 4))
        guard metadataLength <= data.count - footerSize,
              checksum(data.prefix(data.count - footerSize)) == read(bytes, at: 0, bytes: 8)
        else { return nil }
        let payloadLength = data.count - footerSize - metadataLength
        let start = data.startIndex + payloadLength
        let fields = [UInt8](data[start..<(start + metadataLength)])
        var offset = 0
        guard fields.count >= 8 else { return nil }
        let expiresMs = Int64(bitPattern: read(fields, at: 0, bytes: 8))
        offset = 8
        var strings: [Data?] = []
        for _ in 0..<3 {
            guard offset + 4 <= fields.count else { return nil }
            let length = read(fields, at: offset, bytes: 4)
            offset += 4
            if length == UInt64(UInt32.max) {
                strings.append(nil)
                continue
            }
            guard Int(length) <= fields.count - offset else { return nil }
            strings.append(Data(fields[offset..<(offset + Int(length))]))
            offset += Int(length)
        }
        guard offset + 8 == fields.count else { return nil }
        let width = Int(read(fields, at: offset, bytes: 4)), height = Int(read(fields, at: offset + 4, bytes: 4))
        var metadata = DiskCacheMetadata()
        metadata.expires = expiresMs == Int64.min ? nil : Date(timeIntervalSince1970: Double(expiresMs) / 1000)
        metadata.etag = strings[0].map { String(decoding: $0, as: UTF8.self) }
        metadata.lastModified = strings[1].map { String(decoding: $0, as: UTF8.self) }
        metadata.userData = strings[2]
        let pixelSize = width == 0 && height == 0 ? nil : PixelSize(width: width, height: height)
        return Contents(payload: data.prefix(payloadLength), kind: kind, metadata: metadata, pixelSize: pixelSize)
    }

    /// The XXH64 of `bytes`.
    private static func checksum(_ bytes: Data) -> UInt64 {
        bytes.withUnsafeBytes { ic_xxh64($0.baseAddress, $0.count, 0x494B_4254) }
    }

    private static func code(_ kind: ImageCacheEntryKind) -> UInt8 {
        switch kind {
        case .image: 0
        case .variant: 1
        case .original: 2
        }
    }

    private static func kind(_ code: UInt8) -> ImageCacheEntryKind? {
        switch code {
        case 0: .image
        case 1: .variant
        case 2: .original
        default: nil
        }
    }

    private static func append(_ value: UInt64, bytes count: Int, to out: inout [UInt8]) {
        for i in 0..<count { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    private static func read(_ bytes: [UInt8], at offset: Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<count { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        return value
    }
}
