import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes JPEG, PNG, GIF and WebP bytes into premultiplied RGBA8 ``Image``s.
///
/// Decoding reads the caller's bytes in place (no copy of the input) and runs
/// on the calling thread; a decode is CPU-bound, so call it from your own
/// worker threads rather than from the Swift cooperative pool.
public struct ImageDecoder: Sendable {
    /// Options applied to every decode.
    public var options: DecodeOptions
    /// Where large output buffers come from and return to; nil allocates fresh memory every time.
    public var bufferPool: BufferPool?

    /// Creates a decoder with the given options, drawing large buffers from `bufferPool`.
    public init(options: DecodeOptions = DecodeOptions(), bufferPool: BufferPool? = .shared) {
        self.options = options
        self.bufferPool = bufferPool
    }

    /// Decodes `data`.
    public func decode(_ data: Data) throws -> Image {
        try data.withUnsafeBytes { try decode($0) }
    }

    /// Decodes `bytes`.
    public func decode(_ bytes: [UInt8]) throws -> Image {
        try bytes.withUnsafeBytes { try decode($0) }
    }

    /// Decodes the bytes in `buffer`, which must stay valid for the call.
    public func decode(_ buffer: UnsafeRawBufferPointer) throws -> Image {
        var statistics = DecodeStatistics()
        return try decode(buffer, statistics: &statistics, cancelFlag: nil)
    }

    /// Decodes the bytes in `buffer` and reports what the decode cost in `statistics`.
    public func decode(_ buffer: UnsafeRawBufferPointer, statistics: inout DecodeStatistics) throws -> Image {
        try decode(buffer, statistics: &statistics, cancelFlag: nil)
    }

    /// Decodes, stopping early with ``ImageKitError/cancelled`` once `cancelFlag` is set.
    func decode(_ buffer: UnsafeRawBufferPointer, statistics: inout DecodeStatistics,
                cancelFlag: UnsafePointer<Int32>?) throws -> Image {
        var opts = options.cValue(cancelFlag: cancelFlag)
        opts.pool = bufferPool?.raw
        var err = ic_error()
        var stats = ic_decode_stats()
        var out: UnsafeMutablePointer<ic_image>?
        let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let st = ic_decode(base, buffer.count, &opts, &out, &stats, &err)
        statistics = DecodeStatistics(stats)
        guard st == IC_OK, let out else {
            throw ImageKitError(status: st, error: err, format: ImageFormat(cValue: ic_sniff(base, buffer.count)))
        }
        return Image(taking: out)
    }

    /// Reads format, size, frame count and orientation from the headers without decoding.
    public static func info(_ data: Data) throws -> ImageInfo {
        try data.withUnsafeBytes { try info($0) }
    }

    /// Reads format, size, frame count and orientation from the headers without decoding.
    public static func info(_ bytes: [UInt8]) throws -> ImageInfo {
        try bytes.withUnsafeBytes { try info($0) }
    }

    /// Reads format, size, frame count and orientation from the headers without decoding.
    public static func info(_ buffer: UnsafeRawBufferPointer) throws -> ImageInfo {
        var info = ic_info()
        var err = ic_error()
        let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let st = ic_probe(base, buffer.count, &info, &err)
        guard st == IC_OK else {
            throw ImageKitError(status: st, error: err, format: ImageFormat(cValue: info.format))
        }
        return ImageInfo(info)
    }
}
