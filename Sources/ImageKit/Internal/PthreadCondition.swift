import Glibc

/// A pthread mutex with one condition variable, for the threads ImageKit starts itself
/// (the worker pool, a large read's parts). Pthread primitives rather than
/// `Synchronization.Mutex`: threads block on the condition, and ThreadSanitizer sees the
/// ordering they make.
///
/// The caller keeps its shared state beside it and touches that state only between
/// ``lock()`` and ``unlock()``.
// @unchecked Sendable: the two pointers are set once in init and freed in deinit; in
// between they are only passed to pthread calls, which are safe from any thread.
final class PthreadCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Takes the mutex.
    func lock() { pthread_mutex_lock(mutex) }

    /// Releases the mutex.
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the mutex, sleeps until signalled, and takes the mutex again; the caller
    /// holds it and checks its condition in a loop (wake-ups may be spurious).
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes one waiting thread.
    func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiting thread.
    func broadcast() { pthread_cond_broadcast(condition) }
}
