import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageKit
@testable import ImageKitRedis
import TestServers
import ImageKitTestSupport
import XCTest

/// Nodes that answer a read with more than anyone should buffer (``HostileRedisNode``): the tier
/// gives up on them by its timeout without allocating what they announce, counts them as failed
/// (their circuit opens), and loads go on from the origin.
final class RedisHostileNodeTests: RedisTestCase {
    private let timeout = Duration.milliseconds(200)
    /// What a loaded 2-core machine may add to a deadline before the caller hears of it.
    private let slack = Duration.milliseconds(300)

    /// A hostile node, stopped when the test ends.
    private func startHostileNode(_ behaviour: HostileRedisNode.Behaviour) throws -> HostileRedisNode {
        let node = try HostileRedisNode(behaviour)
        addTeardownBlock { node.stop() }
        return node
    }

    /// A tier on `node` alone, with the test timeout.
    private func tier(on node: HostileRedisNode) throws -> RedisByteTier {
        var configuration = RedisTierConfiguration(nodes: [RedisEndpoint(host: "127.0.0.1", port: node.port)])
        configuration.timeout = timeout
        configuration.connectTimeout = timeout
        return try RedisByteTier(configuration: configuration)
    }

    /// Two reads from `node` each fail within the timeout (at it, when `endsAtDeadline`); then
    /// the node's circuit is open and a third read is a miss at once.
    private func checkReadsFail(on node: HostileRedisNode, endsAtDeadline: Bool) async throws {
        let tier = try tier(on: node)
        for i in 0..<2 {
            let started = ContinuousClock.now
            let value = await tier.data(forKey: "k\(i)")
            let elapsed = ContinuousClock.now - started
            XCTAssertNil(value)
            XCTAssertLessThan(elapsed, timeout + slack, "read \(i)")
            if endsAtDeadline { XCTAssertGreaterThanOrEqual(elapsed, timeout - .milliseconds(5), "read \(i)") }
        }
        XCTAssertEqual(tier.statistics.failures, 2)
        XCTAssertEqual(tier.statistics.circuitOpenings, 1)
        XCTAssertEqual(tier.statistics.openNodes, [RedisEndpoint(host: "127.0.0.1", port: node.port)])
        let started = ContinuousClock.now
        let skipped = await tier.data(forKey: "k2")
        XCTAssertNil(skipped)
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(50))
        XCTAssertEqual(tier.statistics.skippedOpenCircuit, 1)
    }

    func testANodeAnnouncingTwoGigabytesIsRefusedFromItsHeader() async throws {
        try await checkReadsFail(on: try startHostileNode(.flood), endsAtDeadline: false)
    }

    func testANodeDrippingItsReplyIsCutOffAtTheDeadline() async throws {
        try await checkReadsFail(on: try startHostileNode(.drip), endsAtDeadline: true)
    }

    func testALoadBehindADrippingNodeCompletesFromTheOrigin() async throws {
        let node = try startHostileNode(.drip)
        let origin = try origin(count: 1)
        let tier = try tier(on: node)
        let manager = try manager(over: tier, name: "drip")
        let started = ContinuousClock.now
        let result = try await manager.image(for: origin.url("/0.jpg"))
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(result.image.width, 64)
        // The shared lookups (at most failuresToOpenCircuit of them reach the node) and one
        // download from nginx on 127.0.0.1.
        XCTAssertLessThan(elapsed, timeout * 2 + .seconds(1))
        XCTAssertEqual(requests(origin, "/0.jpg"), 1)
        XCTAssertGreaterThanOrEqual(tier.statistics.failures, 1)
    }

    /// The measurement: `imagekit fetch --shared-cache` of one URL behind a node that
    /// floods a 2 GB reply peaked at 3.8 GB RSS and took 11.9 s. Its peak RSS now stays within
    /// the same fetch's against a real node plus `maxValueBytes` (4 MiB) and a small constant.
    func testTheFetchCommandBehindAFloodingNodeKeepsItsMemory() throws {
        let origin = try origin(count: 1)
        let url = origin.url("/0.jpg").absoluteString
        let real = try startRedis()
        let baseline = try fetchMeasured(["--cache", try temporaryDirectory("cli-real").path, "--shared-cache", real.url,
                                          "--size", "16", "--allow-loopback", url])
        XCTAssertEqual(baseline.status, 0, baseline.output)

        let node = try startHostileNode(.flood)
        let hostile = try fetchMeasured(["--cache", try temporaryDirectory("cli-flood").path, "--shared-cache", node.url,
                                         "--size", "16", "--allow-loopback", url])
        XCTAssertEqual(hostile.status, 0, hostile.output)
        XCTAssertTrue(hostile.output.contains("\nhits: memory 0, disk 0, shared 0, network 1\n"), hostile.output)
        let grewKiB = hostile.peakKiB - baseline.peakKiB
        print("imagekit fetch: peak RSS \(baseline.peakKiB) KiB, \(baseline.seconds) s behind redis-server; "
              + "\(hostile.peakKiB) KiB, \(hostile.seconds) s behind the flooding node")
        XCTAssertLessThan(grewKiB, (4 << 10) + (16 << 10),
                          "peak RSS \(hostile.peakKiB) KiB behind the flooding node, \(baseline.peakKiB) KiB behind redis-server")
        XCTAssertLessThan(hostile.seconds, 5, "the fetch took \(hostile.seconds) s")
    }

    /// Runs `imagekit fetch` with `arguments` to its end (killed after 60 s): its exit status,
    /// standard output and error, peak RSS (KiB) and wall time.
    ///
    /// A Python parent forks and waits for it (`wait4`): the peak RSS Linux reports for a child
    /// includes its parent's when the child was spawned with a shared address space
    /// (`posix_spawn` uses `vfork`), and this test process may have held gigabytes.
    private func fetchMeasured(_ arguments: [String]) throws -> (status: Int32, output: String, peakKiB: Int, seconds: Double) {
        let tool = BuiltProducts.imagekit.path
        let log = try temporaryDirectory("cli-output").appendingPathComponent("output").path
        let parent = """
            import os, sys, time
            started = time.monotonic()
            pid = os.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            killed = False
            while True:
                done, status, usage = os.wait4(pid, 0 if killed else os.WNOHANG)
                if done:
                    break
                if time.monotonic() - started > 60:
                    os.kill(pid, 9)
                    killed = True
                time.sleep(0.01)
            print(f"\\nmeasured {os.waitstatus_to_exitcode(status)} {usage.ru_maxrss} {time.monotonic() - started}")
            """
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = (["python3", "-c", parent, tool, "fetch"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, "python3", &actions, nil, argv, environ)
        guard rc == 0 else { throw ServerError("cannot start python3: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = String(decoding: try Data(contentsOf: URL(fileURLWithPath: log)), as: UTF8.self)
        guard let line = output.split(separator: "\n").last, line.hasPrefix("measured "),
              case let fields = line.split(separator: " "), fields.count == 4,
              let exit = Int32(fields[1]), let peak = Int(fields[2]), let seconds = Double(fields[3])
        else { throw ServerError("the measuring parent failed: \(output)") }
        return (exit, output, peak, seconds)
    }
}
