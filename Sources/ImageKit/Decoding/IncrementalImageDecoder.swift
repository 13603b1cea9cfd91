import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The built-in coder's incremental decoder: the C core's incremental decode (`ic_incremental`),
/// which decodes JPEG, PNG and WebP stills and a GIF's first frame as far as the bytes so far
/// allow and finishes with exactly the pixels ``ImageDecoder`` gives for the whole body. Formats
/// the core decodes only whole are gathered and decoded at ``finish()``.
public final class IncrementalImageDecoder: IncrementalImageDecoding {
    // nonisolated(unsafe): the decode is used by one thread at a time (ic_incremental.h); every
    // use below happens inside `state.withLock`, so even callers that break the one-at-a-time
    // contract are serialised. It is freed in deinit, when no call can be running.
    nonisolated(unsafe) private let raw: OpaquePointer
    /// Whether ``finish()`` ran (true) — later calls fail.
    private let state = Locked(false)
    /// Kept alive for the C decode, which reads the flag and draws buffers from the pool.
    private let cancellation: DecodeCancellation
    private let bufferPool: BufferPool?

    /// Starts a decode with `options`, stopping once `cancellation` is cancelled, drawing large
    /// buffers from `bufferPool`.
    ///
    /// - Throws: ``ImageKitError`` when the decode cannot start (no memory).
    public init(options: DecodeOptions, cancellation: DecodeCancellation = DecodeCancellation(),
                bufferPool: BufferPool? = .shared) throws(ImageKitError) {
        var opts = options.cValue(cancelFlag: cancellation.pointer, helperYieldFlag: cancellation.helperYield?.pointer)
        opts.pool = bufferPool?.raw
        var err = ic_error()
        var out: OpaquePointer?
        let st = ic_incremental_new(&opts, &out, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        raw = out
        self.cancellation = cancellation
        self.bufferPool = bufferPool
    }

    deinit {
        ic_incremental_free(raw)
    }

    /// Feeds the next piece of the body.
    ///
    /// - Throws: ``ImageKitError`` — corrupt data, a limit exceeded, ``ImageKitError/cancelled``,
    ///   or feeding after ``finish()``.
    public func feed(_ data: Data) throws {
        try state.withLock { finished in
            guard !finished else { throw ImageKitError.internal("incremental decode: fed after finish") }
            var err = ic_error()
            let st = data.withUnsafeBytes { buffer in
                ic_incremental_feed(raw, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count, &err)
            }
            guard st == IC_OK else { throw ImageKitError(status: st, error: err, format: format) }
        }
    }

    /// The image as far as it is decoded, or nil (nothing decoded yet, or the format gives no
    /// partial images).
    ///
    /// - Throws: ``ImageKitError`` when the decode has failed.
    public func partialImage() throws -> Image? {
        try state.withLock { finished -> Image? in
            guard !finished else { return nil }
            var err = ic_error()
            var out: UnsafeMutablePointer<ic_image>?
            let st = ic_incremental_partial(raw, &out, &err)
            guard st == IC_OK else { throw ImageKitError(status: st, error: err, format: format) }
            return out.map { Image(taking: $0) }
        }
    }

    /// Bytes of the body the C decode holds now.
    public var bufferedBytes: Int {
        state.withLock { _ in Int(clamping: ic_incremental_buffered_bytes(raw)) }
    }

    /// Whether the decode consumes the bytes as they arrive (false until the format is known,
    /// and for a format decoded only whole).
    public var isStreaming: Bool {
        state.withLock { _ in ic_incremental_is_streaming(raw) != 0 }
    }

    /// Ends the input and returns the image.
    ///
    /// - Throws: ``ImageKitError``, as ``ImageDecoder`` throws for the whole body.
    public func finish() throws -> Image {
        try state.withLock { finished -> Image in
            guard !finished else { throw ImageKitError.internal("incremental decode: finished twice") }
            finished = true
            var err = ic_error()
            var out: UnsafeMutablePointer<ic_image>?
            let st = ic_incremental_finish(raw, &out, nil, &err)
            guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err, format: format) }
            return Image(taking: out)
        }
    }

    /// The format once known (called with the lock held).
    private var format: ImageFormat { ImageFormat(cValue: ic_incremental_format(raw)) }
}
