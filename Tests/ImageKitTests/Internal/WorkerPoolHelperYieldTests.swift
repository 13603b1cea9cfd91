import Foundation
@testable import ImageKit
import XCTest

/// ``WorkerPool/helperYield``: raised while more than one job runs or waits, lowered when a
/// job has the pool to itself again (what a decode's helper thread reads to give way); and
/// ``WorkerPool/offersSecondCore``, which waits a quiet period after the pool held two.
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

    /// Raised while two jobs run and lowered when one is left; a second core is offered to the
    /// job left alone only once the quiet period has passed.
    func testRaisedWhileTwoJobsRunAndLoweredWhenOneIsLeft() {
        let quiet = 1.0
        let pool = WorkerPool(name: "test-yield", maxThreads: 2, quietPeriod: .seconds(quiet))
        let signal = pool.helperYield
        XCTAssertFalse(signal.isRaised, "an idle pool")
        XCTAssertTrue(pool.offersSecondCore, "a pool that never held two jobs")
        let a = HeldJob(), b = HeldJob()
        pool.submit { a.body() }
        a.started.wait()
        XCTAssertFalse(signal.isRaised, "one job has the pool to itself")
        XCTAssertTrue(pool.offersSecondCore, "one job, and the pool never held two")
        pool.submit { b.body() }
        XCTAssertTrue(signal.isRaised, "a second job arrived")
        b.started.wait()
        XCTAssertTrue(signal.isRaised, "two jobs run")
        XCTAssertFalse(pool.offersSecondCore, "two jobs run")
        let lowered = Date()
        b.release.signal()
        b.done.wait()
        waitUntil("the job left alone has the pool to itself") { !signal.isRaised }
        waitUntil("the quiet period passed") { pool.offersSecondCore }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(lowered), quiet, "offered before the quiet period ended")
        a.release.signal()
        a.done.wait()
        waitUntil("the pool is idle") { !signal.isRaised }
    }

    /// A job queued for an idle thread is the only job, not a second one; and a job's awaiting
    /// task resumes after the pool stopped counting it: a lone stream of jobs never raises the
    /// signal, and each is offered a second core.
    func testALoneStreamOfJobsIsOfferedASecondCoreEachTime() async throws {
        let pool = WorkerPool(name: "test-yield", maxThreads: 2)
        for i in 0..<50 {
            let offered = try await pool.run { pool.offersSecondCore && !pool.helperYield.isRaised }
            XCTAssertTrue(offered, "job \(i) ran as if beside another")
            XCTAssertFalse(pool.helperYield.isRaised, "after job \(i)")
        }
        let a = HeldJob()
        pool.submit { a.body() }
        XCTAssertFalse(pool.helperYield.isRaised, "one job, queued or running")
        a.started.wait()
        a.release.signal()
        a.done.wait()
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
