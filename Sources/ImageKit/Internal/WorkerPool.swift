import CImageCore
import Glibc

/// A fixed number of OS threads that run blocking or CPU-heavy jobs (decode,
/// resize, LZ4, disk I/O) off the Swift cooperative pool.
///
/// On a 2-core machine the cooperative pool has 2 threads; a 50 ms decode on
/// one of them stalls every request handler of the service. Jobs submitted
/// here run on the pool's own threads, highest priority first, FIFO within a
/// priority. Threads start on demand, park when idle, and exit once the pool
/// is shut down or released (after finishing the jobs already queued).
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    private let core: Core

    /// How long a pool that held more than one job must then hold at most one before
    /// ``offersSecondCore`` says yes again (default of ``init(name:maxThreads:quietPeriod:)``).
    ///
    /// Under load, a job often finds itself alone for a few milliseconds while the job beside
    /// it hands over to the next; a helper started then is told to yield almost at once, and
    /// what it did is lost. Measured on 2 cores with two streams of 24 MP JPEG decodes
    /// (TwoCoreBenchmarks), offering the helper without this wait cost 0.8 % in throughput and
    /// 0.3 % in CPU; with 100 ms, nothing measurable. A lone request in a quiet service is
    /// unaffected: nothing ran beside it.
    static let defaultQuietPeriod: Duration = .milliseconds(100)

    /// A pool of up to `maxThreads` threads named `name`; `quietPeriod`: see ``offersSecondCore``.
    init(name: String, maxThreads: Int, quietPeriod: Duration = WorkerPool.defaultQuietPeriod) {
        precondition(maxThreads > 0, "a worker pool needs at least one thread")
        core = Core(name: name, maxThreads: maxThreads,
                    quietNanoseconds: MonotonicClock.nanoseconds(quietPeriod))
    }

    deinit {
        core.shutdown()
    }

    /// Most threads the pool runs at once.
    var maxThreads: Int { core.maxThreads }

    /// Whether a job asking may spend a second core (a helper thread) without taking one from
    /// another job: at most one job runs or waits (the one asking), and the pool has held no
    /// more than one for its quiet period (``defaultQuietPeriod``).
    var offersSecondCore: Bool { core.offersSecondCore }

    /// Raised while more than one job runs or waits: a job that took a second core as the lone
    /// job reads it to give that core back when another job arrives.
    var helperYield: AtomicFlag { core.helperYield }

    /// Queues `job`; false (and the job dropped) once the pool is shut down.
    @discardableResult
    func submit(priority: ImagePriority = .normal, _ job: @escaping Job) -> Bool {
        core.submit(priority: priority, Entry(work: job, then: nil))
    }

    /// Refuses new jobs, lets the queued ones run, and returns once every thread has exited.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            core.shutdown(whenDone: continuation)
        }
    }

    /// Runs `body` on the pool and returns its result to the awaiting task.
    ///
    /// Cancellation is checked once, before queueing: if the task is already
    /// cancelled, the body does not run and `CancellationError` is thrown. Once
    /// queued, the body always runs (cancelling the task, shutting the pool down
    /// or releasing it does not drop a queued job) and the call returns when it
    /// ends. If the pool is already shut down, the body does not run and
    /// ``ImageKitError/shutDown(_:)`` is thrown.
    ///
    /// Called from one of the pool's own threads (a task running on the pool as its executor,
    /// see ``enqueue(_:)``), `body` runs there at once: it is on the pool already, and queueing
    /// it would only cost a hop and a wake-up (a pool shutting down still runs it, as it runs
    /// the jobs queued before).
    func run<T: Sendable>(priority: ImagePriority = .normal,
                          _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        if core.isCurrentThread { return try body() }
        // The result also travels through a lock: TSan cannot see the ordering a
        // continuation resumed from one of our threads provides, and would report
        // races on everything the job wrote (an image's fields, …).
        let handoff = Locked<Result<T, any Error>?>(nil)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            // The awaiting task resumes once the job no longer counts as running, so the next
            // job it submits does not find the pool holding two (see offersSecondCore).
            let queued = core.submit(priority: priority, Entry(work: {
                let result = Result { try body() }
                handoff.withLock { $0 = result }
            }, then: { continuation.resume() }))
            if !queued {
                continuation.resume(throwing: ImageKitError.shutDown("\(core.name): the worker threads were shut down"))
            }
        }
        return try handoff.withLock { $0! }.get()
    }

    /// ``run(priority:_:)`` with its failure as an ``ImageKitError`` (see
    /// ``ImageKitError/init(wrapping:)``): `CancellationError` becomes ``ImageKitError/cancelled``.
    func runTyped<T: Sendable>(priority: ImagePriority = .normal,
                               _ body: @escaping @Sendable () throws -> T) async throws(ImageKitError) -> T {
        do {
            return try await run(priority: priority, body)
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// A queued job: `work`, and what runs after the pool stopped counting it (`then`).
    private struct Entry {
        var work: Job
        var then: Job?
    }

    /// The queue and the threads. Threads keep the core alive, not the pool,
    /// so releasing the pool is what lets them finish.
    // @unchecked Sendable: all mutable state (queues, counters, the stopping
    // flag) is read and written only between `wake.lock()` and `wake.unlock()`;
    // jobs are @Sendable closures.
    private final class Core: @unchecked Sendable {
        let name: String
        let maxThreads: Int
        /// Guards the state below; idle threads wait on it for jobs.
        private let wake = PthreadCondition()
        /// Per priority, the jobs not yet taken from `heads[p]` on. A taken job's slot is
        /// emptied at once: the closure holds what the job captured (a download body, a
        /// bitmap), which must not outlive the job while later jobs keep the queue busy.
        private var queues: [[Entry?]] = [[], [], []]
        private var heads = [0, 0, 0]
        private var threads = 0
        private var idle = 0
        /// Jobs taken from the queues and not yet finished.
        private var running = 0
        /// Jobs in the queues.
        private var queued = 0
        /// When the pool last stopped holding more than one job (``MonotonicClock``), 0 if never.
        private var crowdedUntil: UInt64 = 0
        private var stopping = false
        /// Callers of `shutdown(whenDone:)` waiting for the last thread to exit.
        private var exitWaiters: [CheckedContinuation<Void, Never>] = []
        /// Raised while more than one job runs or one waits (kept by `updateYieldLocked`).
        let helperYield = AtomicFlag()

        /// See ``WorkerPool/offersSecondCore``.
        let quietNanoseconds: UInt64

        init(name: String, maxThreads: Int, quietNanoseconds: UInt64) {
            self.name = name
            self.maxThreads = maxThreads
            self.quietNanoseconds = quietNanoseconds
        }

        func submit(priority: ImagePriority, _ job: Entry) -> Bool {
            wake.lock()
            guard !stopping else {
                wake.unlock()
                return false
            }
            queues[priority.rawValue].append(job)
            queued += 1
            var spawn = false
            if idle > 0 {
                wake.signal()
            } else if threads < maxThreads {
                threads += 1
                spawn = true
            }
            updateYieldLocked()
            wake.unlock()
            if spawn { startThread() }
            return true
        }

        /// Whether at most one job runs or waits and the pool has not held more than one for
        /// the last `quietNanoseconds`.
        var offersSecondCore: Bool {
            wake.lock()
            defer { wake.unlock() }
            return running + queued <= 1 && (crowdedUntil == 0 || MonotonicClock.now() &- crowdedUntil >= quietNanoseconds)
        }

        /// Raises or lowers ``helperYield`` after the counts changed; caller holds the mutex.
        private func updateYieldLocked() {
            let raised = running + queued > 1
            guard raised != helperYield.isRaised else { return }
            helperYield.set(raised)
            if !raised { crowdedUntil = MonotonicClock.now() }
        }

        /// Whether the calling thread is one of this pool's.
        var isCurrentThread: Bool {
            pthread_getspecific(Core.threadKey) == Unmanaged.passUnretained(self).toOpaque()
        }

        /// The thread-specific slot where each pool thread keeps its core, for ``isCurrentThread``.
        private static let threadKey: pthread_key_t = {
            var key = pthread_key_t()
            precondition(pthread_key_create(&key, nil) == 0, "ImageKit: no thread-specific key left")
            return key
        }()

        func shutdown() {
            wake.lock()
            stopping = true
            wake.broadcast()
            wake.unlock()
        }

        /// Stops the pool; `continuation` resumes once no thread is left.
        func shutdown(whenDone continuation: CheckedContinuation<Void, Never>) {
            wake.lock()
            stopping = true
            wake.broadcast()
            let done = threads == 0
            if !done { exitWaiters.append(continuation) }
            wake.unlock()
            if done { continuation.resume() }
        }

        /// A thread leaving the pool; the last one resumes the shutdown's waiters.
        private func threadExited() {
            wake.lock()
            threads -= 1
            let waiters = threads == 0 ? exitWaiters : []
            if threads == 0 { exitWaiters = [] }
            wake.unlock()
            for waiter in waiters { waiter.resume() }
        }

        /// The next queued job, highest priority first; caller holds the mutex.
        private func dequeueLocked() -> Entry? {
            for p in stride(from: 2, through: 0, by: -1) where heads[p] < queues[p].count {
                let job = queues[p][heads[p]].take()
                heads[p] += 1
                queued -= 1
                if heads[p] == queues[p].count {
                    queues[p].removeAll(keepingCapacity: true)
                    heads[p] = 0
                } else if heads[p] >= 64 && heads[p] * 2 >= queues[p].count {
                    // A queue that never runs dry: drop the emptied front (amortised O(1)).
                    queues[p].removeFirst(heads[p])
                    heads[p] = 0
                }
                return job
            }
            return nil
        }

        /// A job taken by `nextJob(endingPrevious:)` ended its work (one with a continuation to
        /// run after it stops counting).
        private func finished() {
            wake.lock()
            running -= 1
            updateYieldLocked()
            wake.unlock()
        }

        /// Takes the next job, waiting while there is none; nil once stopping and empty. With
        /// `endingPrevious`, the calling thread's previous job stops counting first, in the same
        /// lock round (a job with nothing to run after it: see `finished()`).
        private func nextJob(endingPrevious: Bool) -> Entry? {
            wake.lock()
            defer { wake.unlock() }
            if endingPrevious { running -= 1 }
            while true {
                if let job = dequeueLocked() {
                    running += 1  // from the queue to running: the count of jobs held is the same
                    if endingPrevious { updateYieldLocked() }
                    return job
                }
                updateYieldLocked()
                if stopping { return nil }
                idle += 1
                wake.wait()
                idle -= 1
            }
        }

        private func startThread() {
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            let rc = pthread_create(&thread, &attributes, { raw in
                let core = Unmanaged<Core>.fromOpaque(raw!).takeRetainedValue()
                ic_thread_set_name(core.name)
                pthread_setspecific(Core.threadKey, raw)
                var ended = false
                while let job = core.nextJob(endingPrevious: ended) {
                    job.work()
                    ended = job.then == nil
                    if let then = job.then {
                        core.finished()
                        then()
                    }
                }
                core.threadExited()
                return nil
            }, context)
            pthread_attr_destroy(&attributes)
            guard rc != 0 else { return }
            // No thread could start: undo the count and, if no thread runs at
            // all, run the queued work here rather than never.
            Unmanaged<Core>.fromOpaque(context).release()
            wake.lock()
            let orphaned = threads == 1
            wake.unlock()
            guard orphaned else {
                threadExited()
                return
            }
            while true {
                wake.lock()
                let job = dequeueLocked()
                wake.unlock()
                guard let job else { break }
                job.work()
                job.then?()
            }
            threadExited()
        }
    }
}
