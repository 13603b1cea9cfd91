import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the manager counts and reports while loads run: ids, the loads and pipelines in
/// flight, background tasks, and events to the observers.
extension ImageManager {
    /// What is in flight, for ``statistics``.
    struct Counters: Sendable {
        var jobs = 0
        var backgroundTasks = 0
        /// `async` loads reading the disk tier inline (``DiskReadStage``).
        var directReads = 0
    }

    /// The id and the per-load observers of a load being asked for, made in the caller's context:
    /// no id (it is taken when needed) and no observers without load observer factories.
    @inline(__always)
    func observeLoad(_ url: URL?) -> (id: UInt64?, observers: [any ImageLoadObserver]) {
        guard hasLoadObserverFactories else { return (nil, []) }
        let id = makeID()
        return (id, configuration.loadObserverFactories.compactMap { $0.makeObserver(task: id, url: url) })
    }

    /// A task that ended (completed, failed or cancelled) leaves the registry.
    func taskEnded(_ task: ImageTask) {
        tasks.withLock { $0[task.id] = nil }
    }

    /// A pipeline's task ended.
    func jobEnded(_ job: ImageLoadJob) {
        registry.withLock { $0.jobEnded(job, key: job.key) }
        counters.withLock { $0.jobs -= 1 }
    }

    /// Starts a Swift task counted in ``statistics`` until it ends, on `executor` when given.
    func spawn(on executor: (any TaskExecutor)? = nil,
               _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        counters.withLock { $0.backgroundTasks += 1 }
        return Task(executorPreference: executor) {
            await body()
            self.counters.withLock { $0.backgroundTasks -= 1 }
        }
    }

    /// Sends `event` to the manager's observers, then to `loadObservers` (those of the loads it
    /// is about), through ``EventFanOut``; builds nothing when there are none.
    func emit(_ event: @autoclosure () -> ImageManagerEvent, to loadObservers: [any ImageLoadObserver] = []) {
        events.emit(event(), to: loadObservers)
    }

    func makeID() -> UInt64 {
        nextID.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
