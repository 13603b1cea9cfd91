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

    private var lanes = [Lane](repeating: Lane(), count: DownloadPriority.allCases.count)

    /// Adds a transfer at `priority`.
    mutating func push(_ entry: Entry, priority: DownloadPriority) {
        lanes[priority.rawValue].entries.append(entry)
    }

    /// The highest-priority live entry that `canStart` accepts, oldest first (FIFO) or
    /// newest first (LIFO) within a lane, removed from the queue.
    mutating func pop(order: DownloaderConfiguration.ExecutionOrder, isLive: (Entry) -> Bool,
                      canStart: (UInt64) -> Bool) -> UInt64? {
        for p in DownloadPriority.allCases.reversed() {
            let found = order == .fifo
                ? Self.popFirst(&lanes[p.rawValue], isLive: isLive, canStart: canStart)
                : Self.popLast(&lanes[p.rawValue], isLive: isLive, canStart: canStart)
            if let found { return found }
        }
        return nil
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
