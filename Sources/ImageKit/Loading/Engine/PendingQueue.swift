/// Queued transfers in three priority lanes, each in arrival order.
///
/// Entries are never removed from the middle: a cancelled transfer, or one
/// whose priority changed (it gets a new entry with a new sequence number),
/// leaves a stale entry that is skipped and dropped when it reaches the end
/// being read. `pop` asks the owner which entries are still live.
struct PendingQueue: Sendable {
    /// One queued transfer at one moment: stale once the transfer's sequence number moves on.
    struct Entry: Sendable {
        let id: UInt64
        let seq: UInt64
    }

    private struct Lane: Sendable {
        var entries: [Entry] = []
        var head = 0
    }

    // One stored lane per priority (not an array), so an empty queue allocates nothing.
    private var high = Lane()
    private var normal = Lane()
    private var low = Lane()

    /// Adds a transfer at `priority`.
    mutating func push(_ entry: Entry, priority: ImagePriority) {
        switch priority {
        case .high: high.entries.append(entry)
        case .normal: normal.entries.append(entry)
        case .low: low.entries.append(entry)
        }
    }

    /// The highest-priority live entry that `canStart` accepts, oldest first (FIFO) or
    /// newest first (LIFO) within a lane, removed from the queue.
    mutating func pop(order: DownloaderConfiguration.ExecutionOrder, isLive: (Entry) -> Bool,
                      canStart: (UInt64) -> Bool) -> UInt64? {
        func pick(_ lane: inout Lane) -> UInt64? {
            order == .fifo ? Self.popFirst(&lane, isLive: isLive, canStart: canStart)
                : Self.popLast(&lane, isLive: isLive, canStart: canStart)
        }
        if let id = pick(&high) { return id }
        if let id = pick(&normal) { return id }
        return pick(&low)
    }

    private static func popFirst(_ lane: inout Lane, isLive: (Entry) -> Bool,
                                 canStart: (UInt64) -> Bool) -> UInt64? {
        defer { compact(&lane) }
        var i = lane.head
        while i < lane.entries.count {
            let entry = lane.entries[i]
            if !isLive(entry) {
                if i == lane.head { lane.head += 1 }
            } else if canStart(entry.id) {
                if i == lane.head { lane.head += 1 }
                return entry.id
            }
            i += 1
        }
        return nil
    }

    private static func popLast(_ lane: inout Lane, isLive: (Entry) -> Bool,
                                canStart: (UInt64) -> Bool) -> UInt64? {
        defer { compact(&lane) }
        var i = lane.entries.count - 1
        while i >= lane.head {
            let entry = lane.entries[i]
            if !isLive(entry) {
                if i == lane.entries.count - 1 { lane.entries.removeLast() }
            } else if canStart(entry.id) {
                if i == lane.entries.count - 1 { lane.entries.removeLast() }
                return entry.id
            }
            i -= 1
        }
        return nil
    }

    /// Drops consumed entries once they are most of the lane.
    private static func compact(_ lane: inout Lane) {
        if lane.head == lane.entries.count {
            lane.entries.removeAll(keepingCapacity: true)
            lane.head = 0
        } else if lane.head > 64 && lane.head * 2 > lane.entries.count {
            lane.entries.removeFirst(lane.head)
            lane.head = 0
        }
    }
}
