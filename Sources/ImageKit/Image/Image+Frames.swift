import CImageCore

extension Image {
    /// Creates an image, still or animated, from frames of RGBA8 pixels (`width * 4` bytes a
    /// row, tightly packed, rows top to bottom): what a custom ``ImageCoding`` coder returns.
    ///
    /// Every argument is checked before pixel memory is allocated: the frame count against
    /// `limits.maxFrames`, `width × height` against `limits.maxPixels` and the bytes of every
    /// frame (rows padded to 64 bytes) against `limits.maxMemoryBytes`, in arithmetic that
    /// cannot overflow.
    ///
    /// - Parameters:
    ///   - width: Width of every frame, in pixels (1 or more).
    ///   - height: Height of every frame, in pixels (1 or more).
    ///   - frames: One array of `width * height * 4` bytes a frame, in display order.
    ///   - delaysMilliseconds: How long each frame shows: one delay a frame (0 or more), or
    ///     none, for delays of 0. A still image keeps no delay, so its delay must be 0.
    ///   - loopCount: How many times an animation plays (0, the default: forever); 0 for a
    ///     still image.
    ///   - premultiplied: `true` (the default) when each colour is already multiplied by its
    ///     alpha (`c * a / 255`, as ImageKit's images are), which is checked (no colour above its
    ///     alpha); `false` for straight RGBA, which is premultiplied while copying.
    ///   - sourceFormat: The format the pixels were decoded from (``ImageFormat/unknown``, the
    ///     default, for a format ImageKit does not name or pixels made in memory).
    ///   - limits: The limits to check the size against (a field of 0: no limit).
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` for an empty size, no frames, a frame of
    ///   the wrong byte count, a delay or loop count out of range, or a colour above its alpha;
    ///   ``ImageKitError/limitExceeded(_:)`` past `limits` or for a size that does not fit in
    ///   memory; ``ImageKitError/outOfMemory(_:)``.
    public convenience init(width: Int, height: Int, frames: [[UInt8]], delaysMilliseconds: [Int] = [],
                            loopCount: Int = 0, premultiplied: Bool = true, sourceFormat: ImageFormat = .unknown,
                            limits: DecodeLimits = DecodeLimits()) throws {
        let frameBytes = try Self.checkedFrameBytes(width: width, height: height, frameCount: frames.count,
                                                    limits: limits)
        try Self.checkTiming(frameCount: frames.count, delays: delaysMilliseconds, loopCount: loopCount)
        if let index = frames.firstIndex(where: { $0.count != frameBytes }) {
            throw ImageKitError.invalidArgument("image: frame \(index) has \(frames[index].count) bytes, "
                + "a \(width)x\(height) RGBA frame has \(frameBytes)")
        }
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = ic_image_create(UInt32(width), UInt32(height), UInt32(frames.count), &out, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        do {
            try Self.fill(out, frames: frames, premultiplied: premultiplied)
        } catch {
            ic_image_free(out)
            throw error
        }
        if frames.count > 1 {
            for (index, delay) in delaysMilliseconds.enumerated() {
                out.pointee.frame_delays_ms[index] = UInt32(delay)
            }
        }
        out.pointee.loop_count = UInt32(loopCount)
        out.pointee.source_format = sourceFormat.cValue
        self.init(taking: out)
    }

    /// Copies `frames` into `image`'s frames and sets its opacity.
    private static func fill(_ image: UnsafeMutablePointer<ic_image>, frames: [[UInt8]], premultiplied: Bool)
        throws {
        let width = Int(image.pointee.width)
        let height = Int(image.pointee.height)
        var opaque = true
        for (index, frame) in frames.enumerated() {
            let copied = frame.withUnsafeBufferPointer { src in
                copy(src, into: ic_image_frame(image, UInt32(index)), width: width, height: height,
                     stride: image.pointee.stride, premultiply: !premultiplied)
            }
            guard let frameOpaque = copied else {
                throw ImageKitError.invalidArgument("image: frame \(index) is not premultiplied "
                    + "(a colour is above its alpha); pass premultiplied: false for straight RGBA")
            }
            opaque = opaque && frameOpaque
        }
        image.pointee.is_opaque = opaque ? 1 : 0
    }

    /// The bytes of one packed frame, after checking the size and frame count against `limits`.
    private static func checkedFrameBytes(width: Int, height: Int, frameCount: Int, limits: DecodeLimits) throws
        -> Int {
        guard width > 0, height > 0, width <= Int(UInt32.max), height <= Int(UInt32.max) else {
            throw ImageKitError.invalidArgument("image: \(width)x\(height) is not a valid size")
        }
        guard frameCount > 0 else { throw ImageKitError.invalidArgument("image: no frames") }
        if limits.maxFrames > 0, frameCount > limits.maxFrames {
            throw ImageKitError.limitExceeded("image: \(frameCount) frames, over the limit of \(limits.maxFrames)")
        }
        let (pixels, pixelsOverflow) = width.multipliedReportingOverflow(by: height)
        let (frameBytes, bytesOverflow) = pixels.multipliedReportingOverflow(by: 4)
        guard !pixelsOverflow, !bytesOverflow else {
            throw ImageKitError.limitExceeded("image: \(width)x\(height) does not fit in memory")
        }
        if limits.maxPixels > 0, pixels > limits.maxPixels {
            throw ImageKitError.limitExceeded("image: \(width)x\(height) (\(pixels) pixels), over the limit of "
                + "\(limits.maxPixels) pixels")
        }
        let stride = (width * 4 + Int(IC_ROW_ALIGNMENT) - 1) / Int(IC_ROW_ALIGNMENT) * Int(IC_ROW_ALIGNMENT)
        let (perFrame, frameOverflow) = stride.multipliedReportingOverflow(by: height)
        let (total, totalOverflow) = perFrame.multipliedReportingOverflow(by: frameCount)
        guard !frameOverflow, !totalOverflow else {
            throw ImageKitError.limitExceeded("image: \(width)x\(height) with \(frameCount) frames does not fit in memory")
        }
        if limits.maxMemoryBytes > 0, total > limits.maxMemoryBytes {
            throw ImageKitError.limitExceeded("image: \(width)x\(height) with \(frameCount) frames needs \(total) "
                + "bytes, over the limit of \(limits.maxMemoryBytes)")
        }
        return frameBytes
    }

    /// Checks that there is one delay a frame (or none), every delay and the loop count fit the
    /// C image's fields, and a still image has neither.
    private static func checkTiming(frameCount: Int, delays: [Int], loopCount: Int) throws {
        guard delays.isEmpty || delays.count == frameCount else {
            throw ImageKitError.invalidArgument("image: \(delays.count) delays for \(frameCount) frames")
        }
        if let bad = delays.first(where: { $0 < 0 || $0 > Int(UInt32.max) }) {
            throw ImageKitError.invalidArgument("image: a frame delay of \(bad) ms is out of range")
        }
        guard loopCount >= 0, loopCount <= Int(UInt32.max) else {
            throw ImageKitError.invalidArgument("image: a loop count of \(loopCount) is out of range")
        }
        if frameCount == 1, loopCount != 0 || delays.contains(where: { $0 != 0 }) {
            throw ImageKitError.invalidArgument("image: a still image has no frame delay or loop count")
        }
    }

    /// Copies packed rows from `src` into rows `stride` bytes apart at `dst`, premultiplying
    /// them when asked. Returns whether every pixel is opaque, or nil when `src` is meant to be
    /// premultiplied and a colour is above its alpha.
    private static func copy(_ src: UnsafeBufferPointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>,
                             width: Int, height: Int, stride: Int, premultiply: Bool) -> Bool? {
        let rowBytes = width * 4
        var opaque = true
        for y in 0..<height {
            let row = dst + y * stride
            row.initialize(from: src.baseAddress! + y * rowBytes, count: rowBytes)
            if premultiply {
                opaque = ic_premultiply_row(row, width) != 0 && opaque
                continue
            }
            for x in Swift.stride(from: 0, to: rowBytes, by: 4) {
                let alpha = row[x + 3]
                guard row[x] <= alpha, row[x + 1] <= alpha, row[x + 2] <= alpha else { return nil }
                if alpha != 255 { opaque = false }
            }
        }
        return opaque
    }
}
