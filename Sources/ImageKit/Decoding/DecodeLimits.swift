import CImageCore

/// Resource limits for one decode, checked from the header before any pixel
/// memory is allocated. A value of 0 means "no limit" for that field.
public struct DecodeLimits: Sendable, Hashable {
    /// Largest source frame in pixels (width × height as stored). Default 64 Mi.
    public var maxPixels: Int
    /// Most frames an animation may have. Default 1000.
    public var maxFrames: Int
    /// Largest input in bytes. Default 256 MiB.
    public var maxInputBytes: Int
    /// Most memory one decode may hold, output and codec working buffers together. Default 768 MiB.
    public var maxMemoryBytes: Int

    /// Limits with the given values; a `nil` argument takes the default
    /// (64 Mi pixels, 1000 frames, 256 MiB of input, 768 MiB of memory).
    public init(maxPixels: Int? = nil, maxFrames: Int? = nil, maxInputBytes: Int? = nil,
                maxMemoryBytes: Int? = nil) {
        var d = ic_limits()
        ic_limits_init(&d)
        self.maxPixels = maxPixels ?? Int(clamping: d.max_pixels)
        self.maxFrames = maxFrames ?? Int(d.max_frames)
        self.maxInputBytes = maxInputBytes ?? Int(clamping: d.max_input_bytes)
        self.maxMemoryBytes = maxMemoryBytes ?? Int(clamping: d.max_memory_bytes)
    }

    var cValue: ic_limits {
        ic_limits(
            max_pixels: UInt64(max(0, maxPixels)),
            max_frames: UInt32(clamping: max(0, maxFrames)),
            max_input_bytes: UInt64(max(0, maxInputBytes)),
            max_memory_bytes: UInt64(max(0, maxMemoryBytes)))
    }
}
