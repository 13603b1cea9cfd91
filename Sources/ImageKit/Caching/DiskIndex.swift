/// What a ``DiskCache`` knows about its directory without listing it: each
/// entry file's size and last access, and their total. Built by one scan at
/// open, kept current by every read, write and removal, and reconciled with
/// the directory by each sweep (which picks up other processes' changes).
struct DiskIndex: Sendable {
    struct Entry: Sendable {
        var size: Int
        /// Last read or write, ms since the Unix epoch.
        var accessed: Int64
        /// Orders uses within one millisecond (0 for entries only a scan has seen).
        var sequence: UInt64 = 0
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var totalSize = 0
    private var sequence: UInt64 = 0
    /// A scan is running: names changed meanwhile are remembered, and the
    /// scan's (older) view of them is ignored when it is merged.
    private var scanning = false
    private var changedDuringScan: Set<String> = []

    var count: Int { entries.count }

    /// Records that `name` exists with `size` bytes, accessed at `accessed`.
    mutating func record(_ name: String, size: Int, accessed: Int64) {
        totalSize += size - (entries[name]?.size ?? 0)
        sequence += 1
        entries[name] = Entry(size: size, accessed: accessed, sequence: sequence)
        if scanning { changedDuringScan.insert(name) }
    }

    /// Forgets `name`; returns whether it was known.
    @discardableResult
    mutating func remove(_ name: String) -> Bool {
        if scanning { changedDuringScan.insert(name) }
        guard let old = entries.removeValue(forKey: name) else { return false }
        totalSize -= old.size
        return true
    }

    /// Forgets every entry (the directory was cleared or deleted).
    mutating func removeAll() {
        if scanning { changedDuringScan.formUnion(entries.keys) }
        entries = [:]
        totalSize = 0
    }

    /// Marks the start of a scan.
    mutating func beginScan() {
        scanning = true
        changedDuringScan = []
    }

    /// Replaces the index by what the scan found, except for names changed
    /// since it began; keeps the later of the two access times.
    mutating func finishScan(_ found: [String: Entry]) {
        var next: [String: Entry] = [:]
        next.reserveCapacity(found.count)
        for (name, var entry) in found where !changedDuringScan.contains(name) {
            if let known = entries[name], known.accessed >= entry.accessed {
                entry.accessed = known.accessed
                entry.sequence = known.sequence
            }
            next[name] = entry
        }
        for name in changedDuringScan {
            if let known = entries[name] { next[name] = known }
        }
        entries = next
        totalSize = next.values.reduce(0) { $0 + $1.size }
        scanning = false
        changedDuringScan = []
    }

    /// Removes the least recently used entries until the total is at most
    /// `target` bytes, and returns their names.
    mutating func takeLeastRecentlyUsed(downTo target: Int) -> [String] {
        guard totalSize > target else { return [] }
        let ordered = entries.sorted { a, b in
            (a.value.accessed, a.value.sequence, a.key) < (b.value.accessed, b.value.sequence, b.key)
        }
        var victims: [String] = []
        for (name, _) in ordered where totalSize > target {
            remove(name)
            victims.append(name)
        }
        return victims
    }

    /// Removes the entries last accessed before `cutoff` and returns their names.
    mutating func takeAccessed(before cutoff: Int64) -> [String] {
        let old = entries.filter { $0.value.accessed < cutoff }.map(\.key)
        for name in old { remove(name) }
        return old
    }
}
