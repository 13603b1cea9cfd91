/// One independently locked part of a ``MemoryCache``: a dictionary from key
/// to slot and an intrusive doubly linked list of slots, most recently used
/// first. Slots live in one array and are reused, so a hit only rewrites a
/// few integers and never allocates.
final class MemoryCacheShard: Sendable {
    /// A key with its hash computed once, outside the lock: the hash picks the
    /// shard and is all the shard's dictionary hashes.
    struct Key: Hashable, Sendable {
        let string: String
        let hash: Int

        init(_ string: String) {
            self.string = string
            hash = string.hashValue
        }

        static func == (a: Key, b: Key) -> Bool { a.hash == b.hash && a.string == b.string }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    struct Node: Sendable {
        var key: Key
        var value: MemoryCacheValue?
        var cost: Int
        /// MonotonicClock time after which the entry is dead; 0 = never.
        var expiry: UInt64
        /// Global access stamp: the cache evicts the smallest tail stamp of all shards.
        var stamp: UInt64
        var prev: Int32
        var next: Int32
    }

    struct State: Sendable {
        var slots: [Key: Int32] = [:]
        var nodes: [Node] = []
        /// Most recently used slot, least recently used slot, first free slot (-1 = none).
        var head: Int32 = -1
        var tail: Int32 = -1
        var free: Int32 = -1
        var hits = 0
        var misses = 0
        var expirations = 0

        mutating func unlink(_ i: Int32) {
            let n = nodes[Int(i)]
            if n.prev >= 0 { nodes[Int(n.prev)].next = n.next } else { head = n.next }
            if n.next >= 0 { nodes[Int(n.next)].prev = n.prev } else { tail = n.prev }
        }

        mutating func pushFront(_ i: Int32) {
            nodes[Int(i)].prev = -1
            nodes[Int(i)].next = head
            if head >= 0 { nodes[Int(head)].prev = i }
            head = i
            if tail < 0 { tail = i }
        }

        /// Removes slot `i` and returns its value (to be released outside the lock) and cost.
        mutating func release(_ i: Int32) -> (MemoryCacheValue?, Int) {
            unlink(i)
            let key = nodes[Int(i)].key
            slots.removeValue(forKey: key)
            let value = nodes[Int(i)].value
            let cost = nodes[Int(i)].cost
            nodes[Int(i)].value = nil
            nodes[Int(i)].key = Key("")
            nodes[Int(i)].next = free
            free = i
            return (value, cost)
        }
    }

    let state = Locked(State())
}
