import ImageKit
import Synchronization
import XCTest

/// Shuts a manager down after a test, then lets go of it.
///
/// XCTest keeps a test's teardown blocks, and what they capture, until the process exits: a
/// block capturing the manager itself keeps it and everything it holds (caches, loaders, the
/// bytes in them) alive, which LeakSanitizer reports under `make sanitize`. The block captures
/// this holder instead, which gives the manager up as it shuts it down.
final class ManagerShutdown: Sendable {
    private let manager: Mutex<ImageManager?>

    private init(_ manager: ImageManager) {
        self.manager = Mutex(manager)
    }

    /// Registers `manager`'s shutdown as a teardown block of `test`.
    static func after(_ test: XCTestCase, _ manager: ImageManager) {
        let held = ManagerShutdown(manager)
        test.addTeardownBlock { await held.manager.withLock { $0.take() }?.shutdown() }
    }
}
