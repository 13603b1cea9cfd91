#if IMAGEKIT_PTHREAD_LOCK
import Glibc
#else
import Synchronization
#endif

/// State guarded by a lock, shared by reference. `package`: ImageKit's other targets
/// (ImageKitRedis) lock through it too, so the TSan runs see their locks as well.
///
/// Normally a `Mutex` from Synchronization. Built with `-DIMAGEKIT_PTHREAD_LOCK`
/// (the TSan runs of `make sanitize`), it is a pthread mutex instead: TSan
/// cannot see the ordering inside `Mutex`'s contended slow path and reports
/// races that are not there.
#if IMAGEKIT_PTHREAD_LOCK
// @unchecked Sendable: `state` is only touched inside `withLock`, between
// pthread_mutex_lock and pthread_mutex_unlock on a mutex that lives at a fixed
// address for the object's whole life.
package final class Locked<State: Sendable>: @unchecked Sendable {
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    package func withLock<R: Sendable>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
#else
package final class Locked<State: Sendable>: Sendable {
    private let mutex: Mutex<State>

    package init(_ initial: State) {
        mutex = Mutex(initial)
    }

    /// Runs `body` with exclusive access to the state.
    package func withLock<R: Sendable>(_ body: (inout State) throws -> R) rethrows -> R {
        try mutex.withLock { state throws -> R in try body(&state) }
    }
}
#endif
