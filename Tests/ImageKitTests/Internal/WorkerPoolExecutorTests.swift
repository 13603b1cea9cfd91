import Foundation
@testable import ImageKit
import Synchronization
import XCTest

/// ``WorkerPool`` as a task executor: a task preferring the pool runs on its threads, its
/// `run` calls on that pool run in place, and no task is lost once the pool is shut down.
final class WorkerPoolExecutorTests: XCTestCase {
    /// The order in which the jobs of a test ran.
    private final class Order: Sendable {
        let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
    }

    func testATaskPreferringThePoolRunsOnItsThread() async throws {
        let pool = WorkerPool(name: "test-executor", maxThreads: 1)
        let onPool = try await Self.task(on: pool) { Self.threadName() }
        XCTAssertEqual(onPool, "test-executor")
    }

    /// On a one-thread pool, a job queued before `run` would run first if `run` queued its body
    /// too; in place, the body runs while the thread is still the task's.
    func testRunFromThePoolsOwnThreadRunsInPlaceAheadOfQueuedJobs() async throws {
        let pool = WorkerPool(name: "test-executor", maxThreads: 1)
        let order = Order()
        try await Self.task(on: pool) {
            pool.submit(priority: .high) { order.append("queued") }
            try await pool.run(priority: .low) { order.append("in place") }
        }
        _ = try await pool.run { order.append("after") }
        XCTAssertEqual(order.names.withLock { $0 }, ["in place", "queued", "after"])
    }

    func testRunFromAnotherPoolsThreadIsQueued() async throws {
        let pool = WorkerPool(name: "test-executor", maxThreads: 1)
        let other = WorkerPool(name: "test-other", maxThreads: 1)
        let name = try await Self.task(on: other) {
            try await pool.run { Self.threadName() }
        }
        XCTAssertEqual(name, "test-executor")
    }

    func testATaskPreferringAShutDownPoolStillRuns() async throws {
        let pool = WorkerPool(name: "test-executor", maxThreads: 1)
        await pool.shutdown()
        let ran = try await Self.task(on: pool) { Self.threadName() }
        XCTAssertNotEqual(ran, "test-executor")
    }

    /// `body`'s result, run in a task preferring `executor`.
    private static func task<T: Sendable>(on executor: any TaskExecutor,
                                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await Task(executorPreference: executor, operation: body).value
    }

    /// The calling thread's name (as `ic_thread_set_name` set it).
    private static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
    }
}
