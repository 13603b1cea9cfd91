#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes an ``ImageLoadObserver`` for each load, in the caller's context: called synchronously
/// when the load is asked for — inside the caller's task for the `async` API (and for the
/// completion-handler API called from a task) — before any of the load's events, so it can read
/// the caller's task-local values, such as a tracing context or a request's logger.
///
/// Configured in ``ImageManagerConfiguration/loadObserverFactories``. With none configured, a
/// load makes no per-load observer and allocates nothing for them.
public protocol ImageLoadObserverFactory: Sendable {
    /// An observer for the load `task` (its ``ImageTask/id`` and the `task` of its events) of
    /// `url`, or nil when this load needs none. Must be quick: it runs on the caller's thread,
    /// before a memory hit returns.
    func makeObserver(task: UInt64, url: URL?) -> (any ImageLoadObserver)?
}
