import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes JPEG, PNG, GIF, WebP, AVIF (libavif), HEIC/HEIF (libheif) and JPEG XL (libjxl)
/// bytes into premultiplied RGBA8 ``Image``s.
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
    public func decode(_ data: Data) throws(ImageKitError) -> Image {
        try data.withUnsafeBytes { buffer in Result { () throws(ImageKitError) in try decode(buffer) } }.get()
    }

    /// Decodes `bytes`.
    public func decode(_ bytes: [UInt8]) throws(ImageKitError) -> Image {
        try bytes.withUnsafeBytes { buffer in Result { () throws(ImageKitError) in try decode(buffer) } }.get()
    }

    /// Decodes the bytes in `buffer`, which must stay valid for the call.
    public func decode(_ buffer: UnsafeRawBufferPointer) throws(ImageKitError) -> Image {
        var statistics = DecodeStatistics()
        return try decode(buffer, statistics: &statistics, cancelFlag: nil)
    }

    /// Decodes the bytes in `buffer` and reports what the decode cost in `statistics`.
    public func decode(_ buffer: UnsafeRawBufferPointer, statistics: inout DecodeStatistics)
        throws(ImageKitError) -> Image {
        try decode(buffer, statistics: &statistics, cancelFlag: nil)
    }

    /// Decodes, stopping early with ``ImageKitError/cancelled`` once `cancelFlag` is set (a
    /// helper thread giving repeated work back while `helperYieldFlag` is set).
    func decode(_ buffer: UnsafeRawBufferPointer, statistics: inout DecodeStatistics,
                cancelFlag: UnsafePointer<Int32>?, helperYieldFlag: UnsafePointer<Int32>? = nil)
        throws(ImageKitError) -> Image {
        try options.thumbnailGravity.validate("thumbnail")
        var opts = options.cValue(cancelFlag: cancelFlag, helperYieldFlag: helperYieldFlag)
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
    public static func info(_ data: Data) throws(ImageKitError) -> ImageInfo {
        try data.withUnsafeBytes { buffer in Result { () throws(ImageKitError) in try info(buffer) } }.get()
    }

    /// Reads format, size, frame count and orientation from the headers without decoding.
    public static func info(_ bytes: [UInt8]) throws(ImageKitError) -> ImageInfo {
        try bytes.withUnsafeBytes { buffer in Result { () throws(ImageKitError) in try info(buffer) } }.get()
    }

    /// Reads format, size, frame count and orientation from the headers without decoding.
    ///
    /// No decode limits apply to the size read, but a HEIF file with more items than an image
    /// within the default ``DecodeLimits`` needs throws ``ImageKitError/limitExceeded(_:)``, as
    /// its decode would: libheif reads items in time that grows with their square.
    public static func info(_ buffer: UnsafeRawBufferPointer) throws(ImageKitError) -> ImageInfo {
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
