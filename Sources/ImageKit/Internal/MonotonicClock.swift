import Glibc

/// Nanoseconds from a monotonic clock, for expiry times that must not jump
/// with the wall clock. Reading it does not allocate.
enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (boot).
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Time from `start` (a value of ``now()``) to now.
    static func duration(since start: UInt64) -> Duration {
        .nanoseconds(Int64(clamping: now() &- start))
    }

    /// `duration` in nanoseconds, clamped to 0...UInt64.max.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, o1) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, o2) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return o1 || o2 ? .max : total
    }
}
