extension Duration {
    /// The duration in whole nanoseconds (clamped to `Int64`), as swift-metrics timers record it.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return carry ? (seconds < 0 ? .min : .max) : total
    }

    /// The duration in milliseconds, rounded to the microsecond, for log metadata and span attributes.
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return ((Double(seconds) * 1e6 + Double(attoseconds) / 1e12).rounded()) / 1e3
    }
}
