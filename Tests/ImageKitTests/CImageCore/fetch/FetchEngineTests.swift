import CImageCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestServers
import XCTest

/// The C engine (`ic_fetch`) through its C API: lifecycle, cancellation by id,
/// streaming, and that destroying it leaves no thread, handle or socket behind.
final class FetchEngineTests: LoopbackTestCase {
    /// What the engine reported for one transfer.
    struct Report: Sendable {
        var result: ic_fetch_result
        var status: Int
        var bodyLength: Int
        var message: String
    }

    /// One transfer's callback context: counts streamed bytes and heads, records the outcome.
    final class Probe: @unchecked Sendable {
        // @unchecked Sendable: the engine calls a transfer's callbacks on its one thread,
        // one after another; the test reads `streamed`/`heads` only after `reports` says
        // the transfer completed (NSLock orders the two).
        let reports: Collector<(Int, Report)>
        let index: Int
        let rejectHead: Bool
        var streamed = 0
        var heads = 0
        var destroyOnComplete: OpaquePointer?
        var keepBody = false
        var body: UnsafeMutablePointer<UInt8>?

        init(_ reports: Collector<(Int, Report)>, index: Int, rejectHead: Bool = false) {
            self.reports = reports
            self.index = index
            self.rejectHead = rejectHead
        }
    }

    /// Starts `url` on `engine`; `stream` delivers the body through on_body, and `keep` (with
    /// `stream`) gathers it as well; `maxBody` (non-zero) caps the body.
    @discardableResult
    private func start(_ engine: OpaquePointer, _ url: URL, _ probe: Probe, stream: Bool = false,
                       keep: Bool = false, maxBody: UInt64 = 0, caFile: String? = nil) throws -> UInt64 {
        var req = ic_fetch_request()
        ic_fetch_request_init(&req)
        req.keep_body = keep ? 1 : 0
        if maxBody > 0 { req.max_body_bytes = maxBody }
        req.callbacks.on_head = { ctx, _ in
            let p = Unmanaged<Probe>.fromOpaque(ctx!).takeUnretainedValue()
            p.heads += 1
            return p.rejectHead ? 1 : 0
        }
        if stream {
            req.callbacks.on_body = { ctx, _, len in
                Unmanaged<Probe>.fromOpaque(ctx!).takeUnretainedValue().streamed += len
                return 0
            }
        }
        req.callbacks.on_complete = { ctx, outcome in
            let p = Unmanaged<Probe>.fromOpaque(ctx!).takeRetainedValue()
            let o = outcome!.pointee
            p.reports.append((p.index, Report(result: o.result, status: Int(o.head?.pointee.status ?? 0),
                                              bodyLength: o.body == nil ? -1 : o.body_len,
                                              message: String(cString: o.message))))
            if p.keepBody {
                p.body = outcome!.pointee.body
                outcome!.pointee.body = nil
            }
            if let engine = p.destroyOnComplete { ic_fetch_destroy(engine) }
        }
        req.ctx = Unmanaged.passRetained(probe).toOpaque()
        var id: UInt64 = 0
        var err = ic_error()
        // The servers are on 127.0.0.1: the transfers opt in to loopback. The engine keeps
        // its own reference to the policy, so this one goes when the call returns.
        var spec = ic_fetch_policy_spec()
        ic_fetch_policy_spec_init(&spec)
        spec.allow = UInt32(IC_FETCH_ALLOW_LOOPBACK)
        var policy: OpaquePointer?
        guard ic_fetch_policy_create(&spec, &policy, &err) == IC_OK else {
            Unmanaged<Probe>.fromOpaque(req.ctx).release()
            throw ImageKitErrorText(err)
        }
        defer { ic_fetch_policy_release(policy) }
        req.policy = policy
        let st = url.absoluteString.withCString { u in
            (caFile ?? "").withCString { ca in
                req.url = u
                req.ca_file = caFile == nil ? nil : ca
                return ic_fetch_start(engine, &req, &id, &err)
            }
        }
        guard st == IC_OK else {
            Unmanaged<Probe>.fromOpaque(req.ctx).release()
            throw ImageKitErrorText(err)
        }
        return id
    }

    private func makeEngine(_ name: String, maxHostConnections: UInt32 = 0) throws -> OpaquePointer {
        var cfg = ic_fetch_config()
        ic_fetch_config_init(&cfg)
        cfg.max_host_connections = maxHostConnections
        var err = ic_error()
        var engine: OpaquePointer?
        let st = name.withCString { n in
            cfg.thread_name = n
            return ic_fetch_create(&cfg, &engine, &err)
        }
        guard st == IC_OK, let engine else { throw ImageKitErrorText(err) }
        return engine
    }

    private static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    private static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { tid in comm(ofThread: tid) == name }.count
    }

    /// A thread's name from /proc, or "" once it has exited. Read with open(2) and read(2):
    /// Foundation's String(contentsOfFile:) leaks its buffer when the thread exits between
    /// the directory listing and the read (LeakSanitizer caught it under load).
    private static func comm(ofThread tid: String) -> String {
        let fd = open("/proc/self/task/\(tid)/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return "" }
        return String(decoding: bytes[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testDestroyLeavesNoThreadHandleOrSocket() async throws {
        let f = try fixture
        let ca = try XCTUnwrap(f.nginx.caFile)
        // Warm up once: curl_global_init and TLS set-up keep what they load for the process.
        let warm = try makeEngine("ic-warm-up")
        let warmLog = Collector<(Int, Report)>()
        try start(warm, f.nginx.tlsURL("/small.png"), Probe(warmLog, index: 0), caFile: ca)
        await DownloadTesting.waitUntil("the warm-up transfer completes") { warmLog.all.count == 1 }
        ic_fetch_destroy(warm)

        let descriptors = Self.openDescriptors()
        let engine = try makeEngine("ic-engine-test")
        XCTAssertEqual(Self.threads(named: "ic-engine-test"), 1)
        let log = Collector<(Int, Report)>()
        for i in 0..<10 { try start(engine, f.nginx.url("/files/\(i).bin"), Probe(log, index: i)) }
        for i in 10..<13 { try start(engine, f.nginx.tlsURL("/files/\(i).bin"), Probe(log, index: i), caFile: ca) }
        let k = "engine-hold-\(UUID().uuidString.prefix(8))"
        var held: [UInt64] = []
        for i in 13..<16 { held.append(try start(engine, f.script.url("/hold?key=\(k)-\(i)"), Probe(log, index: i))) }
        try await DownloadTesting.waitUntil("the files arrive and the held requests reach the server") {
            let heldAtServer = try (13..<16).allSatisfy { try f.script.stats("\(k)-\($0)").count == 1 }
            return log.all.count == 13 && heldAtServer
        }
        var stats = ic_fetch_stats()
        ic_fetch_get_stats(engine, &stats)
        XCTAssertEqual(stats.started, 16)
        XCTAssertEqual(stats.completed, 13)
        XCTAssertEqual(stats.active, 3)
        XCTAssertEqual(stats.easy_handles, 3)

        ic_fetch_cancel(engine, held[0])
        ic_fetch_cancel(engine, held[0])
        ic_fetch_cancel(engine, 999_999)
        await DownloadTesting.waitUntil("the cancelled transfer completes") { log.all.count == 14 }
        ic_fetch_destroy(engine)

        let reports = Dictionary(uniqueKeysWithValues: log.all)
        XCTAssertEqual(log.all.count, 16, "every transfer completes exactly once")
        for i in 0..<13 {
            XCTAssertEqual(reports[i]?.result, IC_FETCH_OK, "\(i): \(reports[i]?.message ?? "")")
            XCTAssertEqual(reports[i]?.bodyLength, LoopbackFixture.files["files/\(i).bin"]?.count)
        }
        for i in 13..<16 {
            XCTAssertEqual(reports[i]?.result, IC_FETCH_CANCELLED)
            XCTAssertEqual(reports[i]?.status, 200, "the head had arrived")
        }
        XCTAssertEqual(Self.threads(named: "ic-engine-test"), 0)
        XCTAssertEqual(Self.openDescriptors(), descriptors, "sockets and pipes are all closed")
        for i in 13..<16 {
            try await DownloadTesting.waitUntil("the server sees the connection close") {
                try f.script.stats("\(k)-\(i)").aborted
            }
        }
    }

    func testStreamingBodyAndHeadRejection() async throws {
        let f = try fixture
        let engine = try makeEngine("ic-stream-test")
        defer { ic_fetch_destroy(engine) }
        let log = Collector<(Int, Report)>()
        let streamed = Probe(log, index: 0)
        try start(engine, f.nginx.url("/medium.bin"), streamed, stream: true)
        let rejected = Probe(log, index: 1, rejectHead: true)
        try start(engine, f.nginx.url("/medium.bin"), rejected)
        await DownloadTesting.waitUntil("both complete") { log.all.count == 2 }
        let reports = Dictionary(uniqueKeysWithValues: log.all)
        XCTAssertEqual(reports[0]?.result, IC_FETCH_OK)
        XCTAssertEqual(reports[0]?.bodyLength, -1, "a streamed body is not buffered")
        XCTAssertEqual(streamed.streamed, 300_000)
        XCTAssertEqual(streamed.heads, 1)
        XCTAssertEqual(reports[1]?.result, IC_FETCH_ABORTED)
        XCTAssertEqual(String(cString: ic_fetch_result_name(IC_FETCH_ABORTED)), "aborted")
        XCTAssertEqual(rejected.heads, 1)
    }

    func testAStreamedBodyIsAlsoKeptWhenAsked() async throws {
        let f = try fixture
        let engine = try makeEngine("ic-keep-test")
        defer { ic_fetch_destroy(engine) }
        let log = Collector<(Int, Report)>()
        let both = Probe(log, index: 0)
        try start(engine, f.nginx.url("/medium.bin"), both, stream: true, keep: true)
        await DownloadTesting.waitUntil("complete") { log.all.count == 1 }
        XCTAssertEqual(log.all.first?.1.result, IC_FETCH_OK)
        XCTAssertEqual(log.all.first?.1.bodyLength, 300_000, "keep_body hands the whole body to on_complete")
        XCTAssertEqual(both.streamed, 300_000, "and every byte went through on_body as well")
    }

    func testAStreamedBodyStillObeysTheBodyLimit() async throws {
        let f = try fixture
        let engine = try makeEngine("ic-limit-test")
        defer { ic_fetch_destroy(engine) }
        let log = Collector<(Int, Report)>()
        let probe = Probe(log, index: 0)
        try start(engine, f.nginx.url("/medium.bin"), probe, stream: true, maxBody: 100_000)
        await DownloadTesting.waitUntil("complete") { log.all.count == 1 }
        XCTAssertEqual(log.all.first?.1.result, IC_FETCH_TOO_LARGE)
        XCTAssertLessThanOrEqual(probe.streamed, 100_000, "no byte past the limit reaches on_body")
    }

    func testAKeptBodyOutlivesTheEngine() async throws {
        let f = try fixture
        let engine = try makeEngine("ic-body-test")
        let log = Collector<(Int, Report)>()
        let keeper = Probe(log, index: 0)
        keeper.keepBody = true
        try start(engine, f.nginx.url("/medium.bin"), keeper)
        try start(engine, f.nginx.url("/small.png"), Probe(log, index: 1))
        await DownloadTesting.waitUntil("both complete") { log.all.count == 2 }
        var stats = ic_fetch_stats()
        ic_fetch_get_stats(engine, &stats)
        XCTAssertEqual(stats.bodies_out, 1, "only the kept body is out")
        ic_fetch_destroy(engine)
        let body = try XCTUnwrap(keeper.body)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: body, count: 300_000)), LoopbackFixture.files["medium.bin"])
        ic_fetch_body_release(body)
    }

    func testDestroyFromACallback() async throws {
        let f = try fixture
        let engine = try makeEngine("ic-self-destroy")
        let log = Collector<(Int, Report)>()
        let k = "self-destroy-\(UUID().uuidString.prefix(8))"
        try start(engine, f.script.url("/hold?key=\(k)"), Probe(log, index: 1))
        try await DownloadTesting.waitUntil("the held request reaches the server") {
            try f.script.stats(k).count == 1
        }
        let destroyer = Probe(log, index: 0)
        destroyer.destroyOnComplete = engine
        try start(engine, f.nginx.url("/small.png"), destroyer)
        await DownloadTesting.waitUntil("the engine thread ends") {
            log.all.count == 2 && Self.threads(named: "ic-self-destroy") == 0
        }
        let reports = Dictionary(uniqueKeysWithValues: log.all)
        XCTAssertEqual(reports[0]?.result, IC_FETCH_OK)
        XCTAssertEqual(reports[1]?.result, IC_FETCH_CANCELLED)
    }

    func testConnectionsPerHostLimit() async throws {
        let f = try fixture
        let engine = try makeEngine("ic-limit-test", maxHostConnections: 1)
        defer { ic_fetch_destroy(engine) }
        let log = Collector<(Int, Report)>()
        let k = "limit-\(UUID().uuidString.prefix(8))"
        for i in 0..<3 { try start(engine, f.script.url("/gate?key=\(k)&n=100"), Probe(log, index: i)) }
        try await DownloadTesting.waitUntil("one request reaches the server") { try f.script.stats(k).count == 1 }
        var stats = ic_fetch_stats()
        ic_fetch_get_stats(engine, &stats)
        XCTAssertEqual(stats.active, 3, "all three are in curl, two wait for the connection")
        XCTAssertEqual(try f.script.stats(k).count, 1)
        try f.script.open(k)
        await DownloadTesting.waitUntil("all complete") { log.all.count == 3 }
        XCTAssertEqual(log.all.map(\.1.result), [IC_FETCH_OK, IC_FETCH_OK, IC_FETCH_OK])
        XCTAssertEqual(try f.script.stats(k).count, 3, "one after another on the one connection")
    }

    func testInvalidRequestsAreRefused() throws {
        let engine = try makeEngine("ic-invalid-test")
        defer { ic_fetch_destroy(engine) }
        var req = ic_fetch_request()
        ic_fetch_request_init(&req)
        var err = ic_error()
        var id: UInt64 = 0
        XCTAssertEqual(ic_fetch_start(engine, &req, &id, &err), IC_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(ImageKitErrorText(err).description.contains("URL"))
        var stats = ic_fetch_stats()
        ic_fetch_get_stats(engine, &stats)
        XCTAssertEqual(stats.started, 0)
    }
}

/// The sentence of a C error.
struct ImageKitErrorText: Error, CustomStringConvertible {
    let description: String

    init(_ err: ic_error) {
        var e = err
        description = withUnsafeBytes(of: &e.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
