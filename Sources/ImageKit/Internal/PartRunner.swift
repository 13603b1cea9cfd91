import CImageCore
import Glibc

/// Runs the parts of one job on the calling thread and on a worker pool's
/// threads at once: the disk tier's large reads, which the C store splits into
/// parts and hands to its `run_parts` callback (see `ic_store_read_options`).
///
/// The calling thread and every helper job queued on the pool claim the next
/// unclaimed part until none is left; the caller then waits only for the parts
/// helpers have claimed and are running. A busy pool therefore never stalls a
/// read: the calling thread runs whatever no helper took, and a helper that
/// starts after the last part was claimed returns at once.
final class PartRunner: Sendable {
    private let pool: WorkerPool

    /// A runner whose helpers are jobs on `pool`.
    init(pool: WorkerPool) {
        self.pool = pool
    }

    /// Calls `part(i)` once for every `i` in `0..<count`, on the calling thread
    /// and on up to `count - 1` of the pool's threads, and returns once every
    /// call has returned.
    func run(count: Int, _ part: @escaping @Sendable (Int) -> Void) {
        guard count > 1 else {
            if count == 1 { part(0) }
            return
        }
        let claims = Claims(count: count, part: part)
        for _ in 0..<min(count - 1, pool.maxThreads) {
            pool.submit(priority: .high) { claims.work() }
        }
        claims.work()
        claims.waitUntilFinished()
    }

    /// Lets the C store split a large read of `options` into up to `parts` parts and
    /// run them here. The runner must outlive every read made with `options`.
    func configure(_ options: inout ic_store_read_options, parts: Int) {
        options.threads = Int32(clamping: parts)
        options.run_parts_context = Unmanaged.passUnretained(self).toOpaque()
        options.run_parts = { context, count, part, arg in
            guard let context, let part else { return }
            let runner = Unmanaged<PartRunner>.fromOpaque(context).takeUnretainedValue()
            let job = CPart(function: part, argument: arg)
            runner.run(count: Int(count)) { job.call(UInt32($0)) }
        }
    }

    /// One C part function and its argument.
    // @unchecked Sendable: the store keeps `argument` valid until `run_parts` returns, and
    // `run` calls `function` only before it returns; the parts write disjoint memory.
    private struct CPart: @unchecked Sendable {
        let function: ic_store_part_fn
        let argument: UnsafeMutableRawPointer?

        func call(_ index: UInt32) {
            function(argument, index)
        }
    }

    /// The parts of one `run`: the next one to claim and how many have finished.
    // @unchecked Sendable: `next` and `finished` are read and written only between
    // pthread_mutex_lock and unlock of `mutex` (a pthread mutex and condition, so that
    // TSan sees that every part's writes happen before `run` returns).
    private final class Claims: @unchecked Sendable {
        private let count: Int
        private let part: @Sendable (Int) -> Void
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let allFinished: UnsafeMutablePointer<pthread_cond_t>
        private var next = 0
        private var finished = 0

        init(count: Int, part: @escaping @Sendable (Int) -> Void) {
            self.count = count
            self.part = part
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            allFinished = .allocate(capacity: 1)
            allFinished.initialize(to: pthread_cond_t())
            pthread_cond_init(allFinished, nil)
        }

        deinit {
            pthread_cond_destroy(allFinished)
            allFinished.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Runs parts until none is left to claim.
        func work() {
            while let index = claim() {
                part(index)
                pthread_mutex_lock(mutex)
                finished += 1
                if finished == count { pthread_cond_broadcast(allFinished) }
                pthread_mutex_unlock(mutex)
            }
        }

        /// Returns once every part has finished.
        func waitUntilFinished() {
            pthread_mutex_lock(mutex)
            while finished < count { pthread_cond_wait(allFinished, mutex) }
            pthread_mutex_unlock(mutex)
        }

        private func claim() -> Int? {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            guard next < count else { return nil }
            next += 1
            return next - 1
        }
    }
}
