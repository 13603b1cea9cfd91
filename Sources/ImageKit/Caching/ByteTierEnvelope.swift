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
/// payload | expires i64 | etag | lastModified | userData | metadataLength u32 | kind u8 | version u8 | "IKBT"
/// ```
/// Integers are little-endian; each optional field is a u32 length (`0xFFFFFFFF`: absent)
/// followed by its bytes; `expires` is milliseconds since 1970 (`Int64.min`: none).
enum ByteTierEnvelope {
    static let magic: [UInt8] = Array("IKBT".utf8)
    static let version: UInt8 = 1
    /// metadataLength, kind, version, magic.
    static let footerSize = 4 + 1 + 1 + 4

    /// What an envelope holds.
    struct Contents {
        var payload: Data
        var kind: ImageCacheEntryKind
        var metadata: DiskCacheMetadata
    }

    /// `payload` with `kind` and `metadata` after it.
    static func wrap(_ payload: Data, kind: ImageCacheEntryKind, metadata: DiskCacheMetadata) -> Data {
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
        let metadataLength = tail.count
        append(UInt64(metadataLength), bytes: 4, to: &tail)
        tail.append(code(kind))
        tail.append(version)
        tail.append(contentsOf: magic)
        var data = Data(capacity: payload.count + tail.count)
        data.append(payload)
        data.append(contentsOf: tail)
        return data
    }

    /// The contents of `data`, or nil when it is not an envelope of this version (damaged,
    /// truncated, or written by something else).
    static func unwrap(_ data: Data) -> Contents? {
        guard data.count >= footerSize else { return nil }
        let bytes = [UInt8](data.suffix(footerSize))
        guard Array(bytes[6..<10]) == magic, bytes[5] == version, let kind = kind(bytes[4]) else { return nil }
        let metadataLength = Int(read(bytes, at: 0, bytes: 4))
        guard metadataLength <= data.count - footerSize else { return nil }
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
        guard offset == fields.count else { return nil }
        var metadata = DiskCacheMetadata()
        metadata.expires = expiresMs == Int64.min ? nil : Date(timeIntervalSince1970: Double(expiresMs) / 1000)
        metadata.etag = strings[0].map { String(decoding: $0, as: UTF8.self) }
        metadata.lastModified = strings[1].map { String(decoding: $0, as: UTF8.self) }
        metadata.userData = strings[2]
        return Contents(payload: data.prefix(payloadLength), kind: kind, metadata: metadata)
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
