/// A worker pool is also a task executor: a task started with the pool as its executor
/// preference runs its synchronous stretches on the pool's threads, and its calls to
/// ``WorkerPool/run(priority:_:)`` on that pool run in place. The manager starts a
/// completion-handler load that will likely be answered by a disk read there, so the read
/// costs no hop of its own.
extension WorkerPool: TaskExecutor {
    /// Queues `job` at high priority (the stretches are short: a disk read and the end of a
    /// load); once the pool is shut down, on the global concurrent executor instead, so no task
    /// is ever dropped.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = submit(priority: .high) { [self] in
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
        if !queued { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
