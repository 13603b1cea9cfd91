import Foundation
import ImageKit
import Synchronization

/// A cache of the tests' own, kept in dictionaries: a "memory" and a "disk" tier, each holding
/// entries of every kind (one per key and kind) with their metadata. It records every call in a ``CacheCallLog`` and can be
/// told to fail, to hold its queries until cancelled, to answer its memory tier
/// synchronously, or to name a read executor (so that the manager's `async` loads read it
/// directly).
final class InMemoryImageCache: ImageCaching {
    struct Stored: Sendable {
        var value: ImageCacheValue
        var metadata: DiskCacheMetadata
    }

    /// A failure the cache throws when told to fail.
    struct Failure: Error, Equatable {
        let cache: String
    }

    let name: String
    let log: CacheCallLog
    /// Whether ``memoryValue(forKey:kind:)`` answers (else the default, nil, and memory queries
    /// go through ``entry(forKey:kind:from:)``).
    let synchronousMemory: Bool
    private struct Key: Hashable {
        var key: String
        var kind: ImageCacheEntryKind
    }

    private let tiers = Locked<[ImageCacheType: [Key: Stored]]>([.memory: [:], .disk: [:]])
    private let failing = Atomic<Bool>(false)
    private let holdingQueries = Atomic<Bool>(false)
    private let storeDelay = Locked<Duration?>(nil)
    /// Queries and contains checks held until ``release()``, whether cancelled or not (nil: not held).
    private let gate = Locked<[CheckedContinuation<Void, Never>]?>(nil)

    /// What ``readExecutor(forKey:kind:from:)`` answers for queries that include the disk tier.
    private let diskReadExecutor: (any TaskExecutor)?

    init(_ name: String, log: CacheCallLog = CacheCallLog(), synchronousMemory: Bool = false,
         readExecutor: (any TaskExecutor)? = nil) {
        self.name = name
        self.log = log
        self.synchronousMemory = synchronousMemory
        diskReadExecutor = readExecutor
    }

    func readExecutor(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType)
        -> (any TaskExecutor)? {
        tiers.contains(.disk) ? diskReadExecutor : nil
    }

    /// Every operation throws ``Failure`` from now on (or no longer).
    func fail(_ yes: Bool) { failing.store(yes, ordering: .relaxed) }

    /// Queries wait until their task is cancelled (then throw `CancellationError`).
    func holdQueries(_ yes: Bool) { holdingQueries.store(yes, ordering: .relaxed) }

    /// Queries and contains checks wait from now on until ``release()``, ignoring cancellation
    /// (a cache whose I/O cannot be interrupted).
    func gateQueries() { gate.withLock { $0 = $0 ?? [] } }

    /// Lets the held queries and contains checks go on, and no longer holds new ones.
    func release() {
        for waiter in gate.withLock({ g -> [CheckedContinuation<Void, Never>] in
            defer { g = nil }
            return g ?? []
        }) { waiter.resume() }
    }

    private func passGate() async {
        await withCheckedContinuation { continuation in
            let held = gate.withLock { g -> Bool in
                guard g != nil else { return false }
                g?.append(continuation)
                return true
            }
            if !held { continuation.resume() }
        }
    }

    /// Stores sleep this long before storing.
    func delayStores(_ delay: Duration?) { storeDelay.withLock { $0 = delay } }

    /// What `tier` holds of `kind` (nil: of any kind) under `key`, without recording a call.
    func stored(_ key: String, _ kind: ImageCacheEntryKind? = nil, in tier: ImageCacheType) -> Stored? {
        tiers.withLock { t in
            for k in kind.map({ [$0] }) ?? ImageCacheEntryKind.allCases {
                if let found = t[tier]?[Key(key: key, kind: k)] { return found }
            }
            return nil
        }
    }

    /// How many entries `tier` holds.
    func count(_ tier: ImageCacheType) -> Int {
        tiers.withLock { $0[tier]?.count ?? 0 }
    }

    private func check() throws {
        if failing.load(ordering: .relaxed) { throw Failure(cache: name) }
    }

    private static func list(_ tiers: ImageCacheType) -> [ImageCacheType] {
        [.memory, .disk].filter { tiers.contains($0) }
    }

    var answersMemoryQueriesSynchronously: Bool { synchronousMemory }

    func memoryValue(forKey key: String, kind: ImageCacheEntryKind) -> ImageCacheValue? {
        guard synchronousMemory, !failing.load(ordering: .relaxed) else { return nil }
        log.record("\(name).memoryValue \(key)")
        return stored(key, kind, in: .memory)?.value
    }

    func entry(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async throws
        -> ImageCacheHit? {
        log.record("\(name).entry \(key) \(kind) \(tiers)")
        await passGate()
        if holdingQueries.load(ordering: .relaxed) {
            try await Task.sleep(for: .seconds(60))
        }
        try check()
        for tier in Self.list(tiers) {
            if let found = stored(key, kind, in: tier) {
                if let expires = found.metadata.expires, expires <= Date() { continue }
                return ImageCacheHit(value: found.value, metadata: found.metadata, tier: tier)
            }
        }
        return nil
    }

    func store(_ value: ImageCacheValue, forKey key: String, to tiers: ImageCacheType,
               metadata: DiskCacheMetadata) async throws {
        log.record("\(name).store \(key) \(value.kind) \(tiers)")
        if let delay = storeDelay.withLock({ $0 }) { try await Task.sleep(for: delay) }
        try check()
        self.tiers.withLock { t in
            for tier in Self.list(tiers) {
                t[tier]?[Key(key: key, kind: value.kind)] = Stored(value: value, metadata: metadata)
            }
        }
        log.record("\(name).stored \(key)")
    }

    func remove(forKey key: String, from tiers: ImageCacheType) async throws {
        log.record("\(name).remove \(key) \(tiers)")
        try check()
        self.tiers.withLock { t in
            for tier in Self.list(tiers) {
                for kind in ImageCacheEntryKind.allCases { t[tier]?[Key(key: key, kind: kind)] = nil }
            }
        }
    }

    func contains(_ key: String, kind: ImageCacheEntryKind, in tiers: ImageCacheType) async -> Bool {
        log.record("\(name).contains \(key) \(kind) \(tiers)")
        await passGate()
        if holdingQueries.load(ordering: .relaxed) {
            try? await Task.sleep(for: .seconds(60))
            return false
        }
        guard !failing.load(ordering: .relaxed) else { return false }
        return Self.list(tiers).contains { stored(key, kind, in: $0) != nil }
    }

    func clear(_ tiers: ImageCacheType) async throws {
        log.record("\(name).clear \(tiers)")
        try check()
        self.tiers.withLock { t in
            for tier in Self.list(tiers) { t[tier] = [:] }
        }
    }
}
