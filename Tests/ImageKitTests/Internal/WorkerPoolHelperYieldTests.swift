import Foundation
@testable import ImageKit
import XCTest

/// ``WorkerPool/helperYield``: raised while more than one job runs or one waits, lowered when a
/// job has the pool to itself again (what a decode's helper thread reads to give way).
final class WorkerPoolHelperYieldTests: XCTestCase {
    /// A job that signals it started and runs until released.
    private final class HeldJob: Sendable {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)

        func body() {
            started.signal()
            release.wait()
            done.signal()
        }
    }

    private func waitUntil(_ what: String, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return XCTFail("timed out waiting until \(what)") }
            usleep(1000)
        }
    }

    func testRaisedWhileTwoJobsRunAndLoweredWhenOneIsLeft() {
        let pool = WorkerPool(name: "test-yield", maxThreads: 2)
        let signal = pool.helperYield
        XCTAssertFalse(signal.isRaised, "an idle pool")
        let a = HeldJob(), b = HeldJob()
        pool.submit { a.body() }
        a.started.wait()
        XCTAssertFalse(signal.isRaised, "one job has the pool to itself")
        pool.submit { b.body() }
        XCTAssertTrue(signal.isRaised, "a second job arrived")
        b.started.wait()
        XCTAssertTrue(signal.isRaised, "two jobs run")
        b.release.signal()
        b.done.wait()
        waitUntil("the job left alone has the pool to itself") { !signal.isRaised }
        a.release.signal()
        a.done.wait()
        waitUntil("the pool is idle") { pool.runsAtMostOneJob && !signal.isRaised }
    }

    /// On one thread, a queued job is other work too: raised until the running job ends and
    /// the queued one runs alone.
    func testAQueuedJobRaisesIt() {
        let pool = WorkerPool(name: "test-yield", maxThreads: 1)
        let signal = pool.helperYield
        let a = HeldJob(), b = HeldJob()
        pool.submit { a.body() }
        a.started.wait()
        pool.submit { b.body() }
        XCTAssertTrue(signal.isRaised, "a job waits")
        a.release.signal()
        b.started.wait()
        XCTAssertFalse(signal.isRaised, "the queued job now runs alone")
        b.release.signal()
        b.done.wait()
    }
}
