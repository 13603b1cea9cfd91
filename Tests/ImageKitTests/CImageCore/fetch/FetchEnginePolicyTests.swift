import CImageCore
import Dispatch
import Foundation
import XCTest

/// The C engine's destination checks with public-looking host names that resolve to
/// 127.0.0.1 (through the request's `resolve` entries, libcurl's CURLOPT_RESOLVE): the
/// check is on the address connected to, whatever the name looks like.
final class FetchEnginePolicyTests: LoopbackTestCase {
    struct Outcome {
        var result: ic_fetch_result
        var message: String
        var status: Int
        var bodyLength: Int
    }

    /// The outcome of one transfer, written on the engine thread and read after `done` fires.
    final class Box: @unchecked Sendable {
        // @unchecked Sendable: the engine writes `outcome` once, in on_complete, before
        // signalling `done`; the test reads it only after waiting on `done`.
        var outcome: Outcome?
        let done = DispatchSemaphore(value: 0)
    }

    /// GETs `url` on a fresh engine with `resolve` entries, under a policy of `allow` bits and
    /// `allowList` (nil: the request names no policy, so the default applies).
    private func fetch(_ url: String, resolve: [String], allow: UInt32? = nil,
                       allowList: [String] = []) throws -> Outcome {
        var cfg = ic_fetch_config()
        ic_fetch_config_init(&cfg)
        var err = ic_error()
        var engine: OpaquePointer?
        guard ic_fetch_create(&cfg, &engine, &err) == IC_OK, let engine else { throw ImageKitErrorText(err) }
        defer { ic_fetch_destroy(engine) }

        var policy: OpaquePointer?
        if let allow {
            var spec = ic_fetch_policy_spec()
            ic_fetch_policy_spec_init(&spec)
            spec.allow = allow
            let entries = allowList.map { strdup($0) }
            defer { entries.forEach { free($0) } }
            let pointers: [UnsafePointer<CChar>?] = entries.map { UnsafePointer($0) }
            let st = pointers.withUnsafeBufferPointer { p in
                spec.allow_list = p.baseAddress
                spec.allow_count = p.count
                return ic_fetch_policy_create(&spec, &policy, &err)
            }
            guard st == IC_OK else { throw ImageKitErrorText(err) }
        }
        defer { ic_fetch_policy_release(policy) }

        let box = Box()
        var req = ic_fetch_request()
        ic_fetch_request_init(&req)
        req.policy = policy
        req.connect_timeout_ms = 2000
        req.timeout_ms = 5000
        req.callbacks.on_complete = { ctx, outcome in
            let box = Unmanaged<Box>.fromOpaque(ctx!).takeRetainedValue()
            let o = outcome!.pointee
            box.outcome = Outcome(result: o.result, message: String(cString: o.message),
                                  status: Int(o.head?.pointee.status ?? 0), bodyLength: o.body_len)
            box.done.signal()
        }
        req.ctx = Unmanaged.passRetained(box).toOpaque()
        let entries = resolve.map { strdup($0) }
        defer { entries.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = entries.map { UnsafePointer($0) }
        var id: UInt64 = 0
        let st = url.withCString { u in
            pointers.withUnsafeBufferPointer { p in
                req.url = u
                req.resolve = p.baseAddress
                req.resolve_count = p.count
                return ic_fetch_start(engine, &req, &id, &err)
            }
        }
        guard st == IC_OK else {
            Unmanaged<Box>.fromOpaque(req.ctx).release()
            throw ImageKitErrorText(err)
        }
        XCTAssertEqual(box.done.wait(timeout: .now() + 20), .success, "the transfer did not complete")
        return try XCTUnwrap(box.outcome)
    }

    func testAPublicLookingNameThatResolvesToLoopbackIsRefused() throws {
        let f = try fixture
        let p = f.nginx.port
        let url = "http://images.example.com:\(p)/small.png"
        let resolve = ["images.example.com:\(p):127.0.0.1"]

        let refused = try fetch(url, resolve: resolve)
        XCTAssertEqual(refused.result, IC_FETCH_DESTINATION_REFUSED)
        XCTAssertEqual(refused.message,
                       "destination 127.0.0.1 (images.example.com) is loopback, which the policy does not allow")
        XCTAssertEqual(String(cString: ic_fetch_result_name(refused.result)), "destination refused")

        let allowed = try fetch(url, resolve: resolve, allow: UInt32(IC_FETCH_ALLOW_LOOPBACK))
        XCTAssertEqual(allowed.result, IC_FETCH_OK, allowed.message)
        XCTAssertEqual(allowed.bodyLength, LoopbackFixture.files["small.png"]!.count)

        let named = try fetch(url, resolve: resolve, allow: 0, allowList: ["*.example.com"])
        XCTAssertEqual(named.result, IC_FETCH_OK, named.message)

        let v6 = try fetch(url, resolve: ["images.example.com:\(p):[::ffff:127.0.0.1]"])
        XCTAssertEqual(v6.result, IC_FETCH_DESTINATION_REFUSED)
        XCTAssertEqual(v6.message,
                       "destination ::ffff:127.0.0.1 (images.example.com) is loopback, which the policy does not allow")
    }

    func testARedirectToAnotherNameIsCheckedOnItsOwnAddress() throws {
        let f = try fixture
        let resolve = ["cdn.example.com:\(f.script.port):127.0.0.1", "cdn.example.com:\(f.nginx.port):127.0.0.1",
                       "internal.example.com:\(f.nginx.port):127.0.0.1"]
        func redirect(to target: String) -> String {
            var c = URLComponents(string: "http://cdn.example.com:\(f.script.port)/redirect")!
            c.queryItems = [URLQueryItem(name: "to", value: target)]
            return c.url!.absoluteString
        }
        let refused = try fetch(redirect(to: "http://internal.example.com:\(f.nginx.port)/small.png"), resolve: resolve,
                                allow: 0, allowList: ["cdn.example.com"])
        XCTAssertEqual(refused.result, IC_FETCH_DESTINATION_REFUSED)
        XCTAssertEqual(refused.message,
                       "destination 127.0.0.1 (internal.example.com) is loopback, which the policy does not allow")

        let allowed = try fetch(redirect(to: "http://cdn.example.com:\(f.nginx.port)/small.png"), resolve: resolve,
                                allow: 0, allowList: ["cdn.example.com"])
        XCTAssertEqual(allowed.result, IC_FETCH_OK, allowed.message)
        XCTAssertEqual(allowed.status, 200)
    }

    func testBadResolveEntriesAreRefused() throws {
        var cfg = ic_fetch_config()
        ic_fetch_config_init(&cfg)
        var err = ic_error()
        var engine: OpaquePointer?
        guard ic_fetch_create(&cfg, &engine, &err) == IC_OK, let engine else { throw ImageKitErrorText(err) }
        defer { ic_fetch_destroy(engine) }
        var req = ic_fetch_request()
        ic_fetch_request_init(&req)
        req.callbacks.on_complete = { _, _ in }
        var id: UInt64 = 0
        let entries: [UnsafePointer<CChar>?] = [nil]
        let st = "http://example.com/".withCString { u in
            entries.withUnsafeBufferPointer { p in
                req.url = u
                req.resolve = p.baseAddress
                req.resolve_count = 1
                return ic_fetch_start(engine, &req, &id, &err)
            }
        }
        XCTAssertEqual(st, IC_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(ImageKitErrorText(err).description, "fetch: resolve entry 0 is NULL")
    }
}
