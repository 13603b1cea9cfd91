import CImageCore

/// A bounded pool of large pixel buffers that decodes reuse.
///
/// A fresh 48 MiB buffer costs the kernel about 10 ms of page faults and
/// zeroing — as much as decoding a 12 MP JPEG. Buffers of freed images (1 MiB
/// and up) are kept here, at most ``maxIdleBytes`` of them for at most
/// ``maxIdleMilliseconds`` each (checked whenever the pool is used), and given
/// to the next decode of a similar size. ``trim()`` returns them all at once.
public final class BufferPool: Sendable, Hashable {
    /// The pool ``ImageDecoder`` uses unless told otherwise: 128 MiB, 10 s.
    public static let shared = BufferPool(maxIdleBytes: 128 << 20, maxIdleMilliseconds: 10_000)

    /// Most bytes of idle buffers kept.
    public let maxIdleBytes: Int
    /// Longest an idle buffer is kept, in milliseconds.
    public let maxIdleMilliseconds: Int

    // nonisolated(unsafe): the pointer is set once in init and never changes; the C pool
    // it points to guards its own state with a mutex, so any thread may use it.
    nonisolated(unsafe) let raw: OpaquePointer

    /// A pool keeping at most `maxIdleBytes` of idle buffers for at most `maxIdleMilliseconds` each.
    public init(maxIdleBytes: Int, maxIdleMilliseconds: Int) {
        self.maxIdleBytes = max(0, maxIdleBytes)
        self.maxIdleMilliseconds = max(0, maxIdleMilliseconds)
        var pool: OpaquePointer?
        var err = ic_error()
        guard ic_pool_create(self.maxIdleBytes, UInt32(clamping: self.maxIdleMilliseconds), &pool, &err) == IC_OK,
              let pool
        else { fatalError("ImageKit: cannot allocate a buffer pool") }
        raw = pool
    }

    deinit {
        ic_pool_release(raw)
    }

    /// Bytes of idle buffers held now.
    public var idleBytes: Int { ic_pool_idle_bytes(raw) }

    /// How many buffers were reused instead of freshly allocated.
    public var reuseCount: Int { Int(ic_pool_reuse_count(raw)) }

    /// Returns every idle buffer to the system.
    public func trim() { ic_pool_trim(raw) }

    public static func == (a: BufferPool, b: BufferPool) -> Bool { a === b }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
