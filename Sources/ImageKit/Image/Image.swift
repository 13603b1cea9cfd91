import CImageCore

/// A decoded image: premultiplied RGBA8 pixels, rows aligned to 64 bytes,
/// one or more frames.
///
/// `Image` owns the pixel buffer the C core allocated, without copying it,
/// and frees it when the last reference goes away. Pixels never change after
/// creation, so an `Image` can be shared freely between tasks and threads.
///
/// ```swift
/// let image = try ImageDecoder().decode(data)
/// print(image.width, image.height, image.frameCount)
/// image.withUnsafeBytes { pixels in /* premultiplied RGBA */ }
/// ```
// @unchecked Sendable: the only stored state is a pointer to a C image that is
// fully written before `init` returns and never mutated afterwards; it is freed
// exactly once, in `deinit`, when no reference can remain.
public final class Image: @unchecked Sendable {
    let raw: UnsafeMutablePointer<ic_image>

    /// Takes ownership of a C image.
    init(taking raw: UnsafeMutablePointer<ic_image>) {
        self.raw = raw
    }

    deinit {
        ic_image_free(raw)
    }

    /// Creates an image from premultiplied RGBA8 pixels (`width * 4` bytes a row, tightly packed).
    ///
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` when the byte count does not match.
    public convenience init(width: Int, height: Int, premultipliedRGBA pixels: [UInt8]) throws(ImageKitError) {
        guard width > 0, height > 0, width <= Int(UInt32.max), height <= Int(UInt32.max),
              pixels.count == width * height * 4
        else {
            throw ImageKitError.invalidArgument(
                "image: \(pixels.count) bytes do not make a \(width)x\(height) RGBA image")
        }
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = ic_image_create(UInt32(width), UInt32(height), 1, &out, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        var opaque = true
        pixels.withUnsafeBytes { src in
            for y in 0..<height {
                let dst = out.pointee.pixels + y * out.pointee.stride
                let row = UnsafeRawBufferPointer(rebasing: src[(y * width * 4)..<((y + 1) * width * 4)])
                dst.initialize(from: row.bindMemory(to: UInt8.self).baseAddress!, count: width * 4)
                if opaque {
                    for x in 0..<width where row[x * 4 + 3] != 255 {
                        opaque = false
                        break
                    }
                }
            }
        }
        out.pointee.is_opaque = opaque ? 1 : 0
        self.init(taking: out)
    }

    /// Width of every frame, in pixels.
    public var width: Int { Int(raw.pointee.width) }

    /// Height of every frame, in pixels.
    public var height: Int { Int(raw.pointee.height) }

    /// Bytes from one row to the next (a multiple of 64).
    public var bytesPerRow: Int { raw.pointee.stride }

    /// Number of frames (1 for still images).
    public var frameCount: Int { Int(raw.pointee.frame_count) }

    /// Display duration of each frame, in milliseconds (`[0]` for still images).
    public var frameDelays: [Int] {
        guard let delays = raw.pointee.frame_delays_ms else { return [0] }
        return (0..<frameCount).map { Int(delays[$0]) }
    }

    /// How many times an animation loops (0 = forever); 0 for stills.
    public var loopCount: Int { Int(raw.pointee.loop_count) }

    /// Format of the bytes this image was decoded from.
    public var sourceFormat: ImageFormat { ImageFormat(cValue: raw.pointee.source_format) }

    /// Size of the source as stored, before orientation and scaling.
    public var sourceSize: (width: Int, height: Int) {
        (Int(raw.pointee.source_width), Int(raw.pointee.source_height))
    }

    /// EXIF orientation found in the source (1…8).
    public var orientation: Int { Int(raw.pointee.orientation) }

    /// Whether ``orientation`` has been applied to the pixels.
    public var isOrientationApplied: Bool { raw.pointee.orientation_applied != 0 }

    /// Whether every pixel of every frame is fully opaque.
    public var isOpaque: Bool { raw.pointee.is_opaque != 0 }

    /// Bytes of pixel memory this image holds: `bytesPerRow * height * frameCount`.
    public var cost: Int { raw.pointee.frame_size * frameCount }

    /// Calls `body` with the pixels of `frame` (`bytesPerRow * height` bytes, rows padded).
    public func withUnsafeBytes<R>(frame: Int = 0, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(frame >= 0 && frame < frameCount, "frame \(frame) out of range 0..<\(frameCount)")
        let base = UnsafeRawPointer(ic_image_frame(raw, UInt32(frame)))
        return try body(UnsafeRawBufferPointer(start: base, count: raw.pointee.frame_size))
    }

    /// The pixels of `frame` as tightly packed premultiplied RGBA (`width * 4` bytes a row).
    public func packedPixels(frame: Int = 0) -> [UInt8] {
        let rowBytes = width * 4
        return withUnsafeBytes(frame: frame) { src in
            [UInt8](unsafeUninitializedCapacity: rowBytes * height) { dst, count in
                for y in 0..<height {
                    let from = src.baseAddress! + y * bytesPerRow
                    (dst.baseAddress! + y * rowBytes).initialize(
                        from: from.assumingMemoryBound(to: UInt8.self), count: rowBytes)
                }
                count = rowBytes * height
            }
        }
    }
}
