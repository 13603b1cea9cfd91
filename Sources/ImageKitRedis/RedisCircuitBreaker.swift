import ImageKit
import Synchronization

/// One node's circuit: closed while operations succeed; open (the node is skipped: a miss at
/// once) after ``threshold`` failures in a row; after the cool-down one operation is let through
/// as a probe, and its outcome closes the circuit or opens it again.
final class RedisCircuitBreaker: Sendable {
    /// Where the circuit is.
    private enum Phase {
        case closed(failures: Int)
        case open(until: ContinuousClock.Instant)
        case probing
    }

    private let threshold: Int
    private let coolDown: Duration
    private let phase = Locked<Phase>(.closed(failures: 0))
    private let openings = Atomic<Int>(0)

    /// A closed circuit that opens after `threshold` failures in a row for `coolDown`.
    init(threshold: Int, coolDown: Duration) {
        self.threshold = threshold
        self.coolDown = coolDown
    }

    /// How many times the circuit has opened.
    var openCount: Int { openings.load(ordering: .relaxed) }

    /// Whether the circuit is open or probing now (the node is being skipped).
    var isOpen: Bool {
        phase.withLock { if case .closed = $0 { false } else { true } }
    }

    /// Whether an operation may go to the node now; when the cool-down is over, the first
    /// caller becomes the probe and the others are still refused until it reports.
    func allowsRequest(now: ContinuousClock.Instant = .now) -> Bool {
        phase.withLock { phase in
            switch phase {
            case .closed:
                return true
            case .open(let until) where now >= until:
                phase = .probing
                return true
            case .open, .probing:
                return false
            }
        }
    }

    /// An operation reached the node and got an answer.
    func recordSuccess() {
        phase.withLock { $0 = .closed(failures: 0) }
    }

    /// An operation could not reach the node, or timed out.
    func recordFailure(now: ContinuousClock.Instant = .now) {
        let opened = phase.withLock { phase -> Bool in
            switch phase {
            case .closed(let failures) where failures + 1 < threshold:
                phase = .closed(failures: failures + 1)
                return false
            case .open:
                return false
            case .closed, .probing:
                phase = .open(until: now + coolDown)
                return true
            }
        }
        if opened { openings.wrappingAdd(1, ordering: .relaxed) }
    }
}
