import ImageKit

/// Shuts a manager down after a test, then lets go of it:
/// `let held = ManagerShutdown(m); addTeardownBlock { await held.run() }`.
///
/// XCTest keeps a test's teardown blocks, and what they capture, until the process exits: a
/// block capturing the manager itself keeps it and everything it holds (caches, loaders, the
/// bytes in them) alive, which LeakSanitizer reports under `make sanitize`. The block captures
/// this holder instead, which gives the manager up as it shuts it down.
public final class ManagerShutdown: Sendable {
    private let manager: Locked<ImageManager?>

    /// A holder of `manager` until ``run()``.
    public init(_ manager: ImageManager) {
        self.manager = Locked(manager)
    }

    /// Shuts the manager down (once) and lets go of it.
    public func run() async {
        await manager.withLock { $0.take() }?.shutdown()
    }
}
