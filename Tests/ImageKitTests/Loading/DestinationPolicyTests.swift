import Foundation
import ImageKit
import TestServers
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The downloader's destination policy against real servers on 127.0.0.1 (and ::1): every
/// spelling of loopback refused by default and allowed with the opt-in, redirects, reused
/// connections, per-request policies, lists, and that a refused destination gets no connection.
final class DestinationPolicyTests: LoopbackTestCase {
    /// The Python server on ::1, for the IPv6 loopback spelling.
    static let ipv6 = SharedServer(start: { try ScriptServer(address: "::1") }, stop: { $0.stop() })
    /// nginx as a forward proxy for plain HTTP, marking what it passed on (it has no resolver:
    /// only address hosts get through it).
    static let proxy = SharedServer(start: {
        try NginxServer(files: [:],
                        locations: "location / { proxy_pass http://$http_host; add_header X-Proxied yes always; }")
    }, stop: { $0.stop() })

    override class func tearDown() {
        ipv6.stop()
        proxy.stop()
        super.tearDown()
    }

    /// A downloader under `policy` with short timeouts (nothing here may wait long).
    private func downloader(_ policy: DestinationPolicy) throws -> Downloader {
        try DownloadTesting.downloader {
            $0.destinationPolicy = policy
            $0.timeout = .seconds(5)
            $0.connectTimeout = .seconds(2)
        }
    }

    private func refusal(_ d: Downloader, _ url: URL, policy: DestinationPolicy? = nil,
                         file: StaticString = #filePath, line: UInt = #line) async -> String? {
        switch await DownloadTesting.result(d, DownloadRequest(url: url, destinationPolicy: policy)) {
        case .success(let r):
            XCTFail("\(url) was downloaded (status \(r.response.statusCode))", file: file, line: line)
        case .failure(let e) where e.code == .destinationRefused:
            return e.message
        case .failure(let e):
            XCTFail("\(url) failed with \(e) instead of a refusal", file: file, line: line)
        }
        return nil
    }

    private func body(_ d: Downloader, _ url: URL, policy: DestinationPolicy? = nil,
                      file: StaticString = #filePath, line: UInt = #line) async -> [UInt8]? {
        switch await DownloadTesting.result(d, DownloadRequest(url: url, destinationPolicy: policy)) {
        case .success(let r):
            return Array(r.data)
        case .failure(let e):
            XCTFail("\(url) failed: \(e)", file: file, line: line)
            return nil
        }
    }

    /// Checks that downloading `url` is refused, with `message` when given.
    private func expectRefusal(_ d: Downloader, _ url: URL, policy: DestinationPolicy? = nil, _ message: String? = nil,
                               file: StaticString = #filePath, line: UInt = #line) async {
        let refused = await refusal(d, url, policy: policy, file: file, line: line)
        if let message, let refused { XCTAssertEqual(refused, message, file: file, line: line) }
    }

    /// Checks that downloading `url` gives `expected`.
    private func expectBody(_ d: Downloader, _ url: URL, policy: DestinationPolicy? = nil, _ expected: [UInt8]?,
                            file: StaticString = #filePath, line: UInt = #line) async {
        let bytes = await body(d, url, policy: policy, file: file, line: line)
        XCTAssertEqual(bytes, expected, file: file, line: line)
    }

    func testEverySpellingOfLoopbackIsRefusedByDefaultAndAllowedWithTheOptIn() async throws {
        let f = try fixture
        let v6 = try Self.ipv6.get()
        let p = f.nginx.port
        let expected = LoopbackFixture.files["small.png"]!
        let spellings = ["127.0.0.1", "2130706433", "0x7f.1", "0x7F000001", "0177.0.0.1", "127.1",
                         "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0", "localhost", "LocalHost", "a.localhost"]
        let strict = try downloader(.publicOnly)
        let open = try downloader(DestinationPolicy(allowsLoopback: true))
        for host in spellings {
            let url = try XCTUnwrap(URL(string: "http://\(host):\(p)/small.png"), host)
            let message = await refusal(strict, url)
            XCTAssertTrue(message?.hasSuffix("is loopback, which the policy does not allow") ?? false,
                          "\(host): \(message ?? "")")
            let bytes = await body(open, url)
            XCTAssertTrue(bytes == expected, "\(host): \(bytes?.count ?? -1) bytes")
        }
        await expectRefusal(strict, f.nginx.url("/small.png"),
                            "destination 127.0.0.1 is loopback, which the policy does not allow")

        let ipv6URL = v6.url("/bytes?n=300")
        await expectRefusal(strict, ipv6URL, "destination ::1 is loopback, which the policy does not allow")
        let ipv6Bytes = await body(open, ipv6URL)
        XCTAssertEqual(ipv6Bytes, LoopbackFixture.scriptPattern(300))

        // With a final dot libcurl sends these names to the system's resolver, which may not
        // know them (then the download fails to resolve), but under the default policy the
        // resolver is never asked.
        for (host, shown) in [("localhost.", "localhost"), ("127.0.0.1.", "127.0.0.1")] {
            let url = try XCTUnwrap(URL(string: "http://\(host):\(p)/small.png"))
            await expectRefusal(strict, url, "destination \(shown) is loopback, which the policy does not allow")
            switch await DownloadTesting.result(open, DownloadRequest(url: url)) {
            case .success(let r): XCTAssertTrue(Array(r.data) == expected, host)
            case .failure(let e) where e.code == .dnsFailed: break
            case .failure(let e): XCTFail("\(host) with loopback allowed: \(e)")
            }
        }
        await DownloadTesting.assertIdle(strict)
        await DownloadTesting.assertIdle(open)
    }

    func testARefusedDestinationGetsNoConnection() async throws {
        let listener = try PassiveListener()
        defer { listener.close() }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(listener.port)/image.png"))
        await expectRefusal(try downloader(.publicOnly), url,
                            "destination 127.0.0.1 is loopback, which the policy does not allow")
        XCTAssertFalse(listener.hasPendingConnection(), "the refused destination was connected to")

        // The same download with loopback allowed does connect (nobody answers: it times out).
        let d = try DownloadTesting.downloader {
            $0.destinationPolicy = DestinationPolicy(allowsLoopback: true)
            $0.timeout = .milliseconds(300)
        }
        guard case .failure(let e) = await DownloadTesting.result(d, DownloadRequest(url: url)), e.code == .timedOut else {
            return XCTFail("expected a timeout from the silent listener")
        }
        XCTAssertTrue(listener.hasPendingConnection())
    }

    /// The test server's `/redirect` at `server`, sending the client to `target` and counting
    /// its hits under `key`.
    private static func redirect(from server: String, to target: String, key: String) throws -> URL {
        var c = try XCTUnwrap(URLComponents(string: server + "/redirect"))
        c.queryItems = [URLQueryItem(name: "to", value: target), URLQueryItem(name: "key", value: key)]
        return try XCTUnwrap(c.url)
    }

    func testARedirectToARefusedDestinationIsRefused() async throws {
        let f = try fixture
        // localhost is allowed by name; 127.0.0.1 is loopback, which the policy refuses.
        let d = try downloader(DestinationPolicy(allowList: ["localhost"]))
        let key = "redirect-\(UUID().uuidString.prefix(8))"
        func redirect(to target: String) throws -> URL {
            try Self.redirect(from: "http://localhost:\(f.script.port)", to: target, key: key)
        }
        await expectRefusal(d, try redirect(to: "http://127.0.0.1:\(f.nginx.port)/small.png"),
                            "destination 127.0.0.1 is loopback, which the policy does not allow")
        XCTAssertEqual(try f.script.stats(key).count, 1, "the allowed first hop was requested")
        await expectRefusal(d, try redirect(to: "http://[::ffff:127.0.0.1]:\(f.nginx.port)/small.png"),
                            "destination ::ffff:127.0.0.1 is loopback, which the policy does not allow")
        // A redirect to the allowed name goes through.
        let bytes = await body(d, try redirect(to: "http://localhost:\(f.nginx.port)/small.png"))
        XCTAssertEqual(bytes, LoopbackFixture.files["small.png"])
        XCTAssertEqual(try f.script.stats(key).count, 3)
        // nginx's own relative redirects stay on the allowed host.
        await expectBody(d, try XCTUnwrap(URL(string: "http://localhost:\(f.nginx.port)/r1")),
                         LoopbackFixture.files["small.png"])
        await DownloadTesting.assertIdle(d)
    }

    func testAnAllowedOriginIsTrustedForItsSchemeHostAndPortOnly() async throws {
        let f = try fixture
        // The Python server is the origin; nginx listens on another port of the same host.
        let d = try downloader(DestinationPolicy(allowList: ["http://127.0.0.1:\(f.script.port)"]))
        let key = "origin-\(UUID().uuidString.prefix(8))"
        func redirect(to target: String) throws -> URL {
            try Self.redirect(from: "http://127.0.0.1:\(f.script.port)", to: target, key: key)
        }
        await expectBody(d, f.script.url("/bytes?n=300"), LoopbackFixture.scriptPattern(300))
        let loopback = "destination 127.0.0.1 is loopback, which the policy does not allow"
        await expectRefusal(d, try redirect(to: "http://127.0.0.1:\(f.nginx.port)/small.png"), loopback)
        XCTAssertEqual(try f.script.stats(key).count, 1, "the origin itself was asked")
        await expectRefusal(d, f.nginx.url("/small.png"), loopback)
        // The same port under the other scheme is another origin.
        await expectRefusal(d, try XCTUnwrap(URL(string: "https://127.0.0.1:\(f.script.port)/bytes")), loopback)
        // A redirect back to the origin itself goes through.
        await expectBody(d, try redirect(to: "http://127.0.0.1:\(f.script.port)/bytes?n=50"),
                         LoopbackFixture.scriptPattern(50))

        // A bare host entry holds every port of the host, as documented.
        let wide = try downloader(DestinationPolicy(allowList: ["127.0.0.1"]))
        await expectBody(wide, try redirect(to: "http://127.0.0.1:\(f.nginx.port)/small.png"),
                         LoopbackFixture.files["small.png"])
        await DownloadTesting.assertIdle(d)
        await DownloadTesting.assertIdle(wide)
    }

    func testOriginEntriesAreCheckedWhenThePolicyIsBuilt() throws {
        for entry in ["http://127.0.0.1:8080/images", "http://user:pw@host", "http://host:0", "http://host:65536",
                      "https://"] {
            XCTAssertThrowsError(try Downloader(configuration: {
                var c = DownloaderConfiguration()
                c.destinationPolicy = DestinationPolicy(allowList: [entry])
                return c
            }()), entry) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, .invalidArgument, entry)
                XCTAssertFalse("\(error)".contains("pw"), "an entry's password is never echoed: \(error)")
            }
        }
        XCTAssertThrowsError(try Downloader(configuration: {
            var c = DownloaderConfiguration()
            c.destinationPolicy = DestinationPolicy(denyList: ["http://host:80"])
            return c
        }()), "origins belong in the allow-list")
        for entry in ["http://host", "https://HOST:8443/", "http://[::1]:9000", "http://10.0.0.5:81",
                      "http://*.corp.example"] {
            XCTAssertNoThrow(try Downloader(configuration: {
                var c = DownloaderConfiguration()
                c.destinationPolicy = DestinationPolicy(allowList: [entry])
                return c
            }()), entry)
        }
    }

    func testAReusedConnectionIsCheckedForEachRequest() async throws {
        let f = try fixture
        let d = try downloader(.publicOnly)
        let path = "/small.png?reuse=\(UUID().uuidString.prefix(8))"
        let url = f.nginx.url(path)
        let loopback = DestinationPolicy(allowsLoopback: true)
        for i in 0..<2 {
            let request = DownloadRequest(url: url, destinationPolicy: loopback)
            guard case .success(let r) = await DownloadTesting.result(d, request) else {
                return XCTFail("download \(i) failed")
            }
            XCTAssertEqual(r.metrics.newConnections, 1 - i, "the second download reuses the first one's connection")
        }
        // That connection waits in the pool; a request under the default policy must not use it.
        await expectRefusal(d, url, "destination 127.0.0.1 is loopback, which the policy does not allow")
        try await Task.sleep(for: .milliseconds(100))  // nginx logs a request after answering it
        XCTAssertEqual(f.nginx.accessLog().filter { $0.contains(path) }.count, 2, "the refused request reached nginx")
        await DownloadTesting.assertIdle(d)
    }

    func testRequestsUnderDifferentPoliciesShareNoTransfer() async throws {
        let f = try fixture
        let d = try downloader(DestinationPolicy(allowsLoopback: true))
        let key = "policies-\(UUID().uuidString.prefix(8))"
        let url = f.script.url("/gate?key=\(key)&n=200")
        let allowed = Task { await DownloadTesting.result(d, DownloadRequest(url: url)) }
        await DownloadTesting.waitUntil("the first request reached the server") {
            (try? f.script.stats(key).count) == 1
        }
        await expectRefusal(d, url, policy: .publicOnly,
                            "destination 127.0.0.1 is loopback, which the policy does not allow")
        try f.script.open(key)
        guard case .success(let r) = await allowed.value else { return XCTFail("the allowed download failed") }
        XCTAssertEqual(Array(r.data), LoopbackFixture.scriptPattern(200))
        await DownloadTesting.assertIdle(d)
    }

    func testThroughAProxyOnlyTheURLsHostIsChecked() async throws {
        let f = try fixture
        let proxy = try Self.proxy.get()
        func through(_ policy: DestinationPolicy) throws -> Downloader {
            try DownloadTesting.downloader {
                $0.destinationPolicy = policy
                $0.proxy = "http://127.0.0.1:\(proxy.port)"
                $0.timeout = .seconds(5)
            }
        }
        // The proxy is the operator's choice and may be on loopback; the URL's host is still checked.
        let strict = try through(.publicOnly)
        let probe = "/small.png?proxy=\(UUID().uuidString.prefix(8))"
        await expectRefusal(strict, f.nginx.url(probe),
                            "destination 127.0.0.1 is loopback, which the policy does not allow")
        await expectRefusal(strict, try XCTUnwrap(URL(string: "http://localhost:\(f.nginx.port)\(probe)")),
                            "destination localhost is loopback, which the policy does not allow")
        XCTAssertFalse(proxy.accessLog().contains { $0.contains(probe) }, "a refused request reached the proxy")
        // A name is the proxy's to resolve: the policy lets it pass and the proxy answers (this one
        // cannot resolve names: 502). A real proxy must refuse internal destinations itself.
        let name = try XCTUnwrap(URL(string: "http://images.example.com:\(f.nginx.port)/small.png"))
        switch await DownloadTesting.result(strict, DownloadRequest(url: name)) {
        case .failure(let e) where e.httpStatus == 502: break
        case let other: XCTFail("a name through the proxy: \(other)")
        }

        let open = try through(DestinationPolicy(allowsLoopback: true))
        let small = DownloadRequest(url: f.nginx.url("/small.png"))
        guard case .success(let r) = await DownloadTesting.result(open, small) else {
            return XCTFail("the download through the proxy failed")
        }
        XCTAssertEqual(r.response.headers["X-Proxied"], "yes")
        XCTAssertTrue(Array(r.data) == LoopbackFixture.files["small.png"])

        // Without a proxy setting the environment's proxy variables are not used.
        setenv("http_proxy", "http://127.0.0.1:\(proxy.port)", 1)
        defer { unsetenv("http_proxy") }
        let direct = try downloader(DestinationPolicy(allowsLoopback: true))
        guard case .success(let d) = await DownloadTesting.result(direct, small) else {
            return XCTFail("the direct download failed")
        }
        XCTAssertNil(d.response.headers["X-Proxied"])
        for d in [strict, open, direct] { await DownloadTesting.assertIdle(d) }
    }

    func testCloudMetadataIsRefusedEvenWithPrivateAndLinkLocalAllowed() async throws {
        let d = try downloader(DestinationPolicy(allowsLoopback: true, allowsPrivateNetworks: true,
                                                 allowsLinkLocal: true))
        let cases = [
            ("169.254.169.254", "169.254.169.254"), ("2852039166", "169.254.169.254"),
            ("[::ffff:169.254.169.254]", "::ffff:169.254.169.254"), ("[fd00:ec2::254]", "fd00:ec2::254"),
            ("169.254.170.2", "169.254.170.2"), ("100.100.100.200", "100.100.100.200"),
        ]
        for (host, shown) in cases {
            let url = try XCTUnwrap(URL(string: "http://\(host)/latest/meta-data/"))
            await expectRefusal(d, url, "destination \(shown) is a cloud metadata address, "
                                + "which the policy allows only when its allow-list names it")
        }
        // An allow-list prefix around it does not name it either.
        let wide = try downloader(DestinationPolicy(allowList: ["169.254.0.0/16", "fd00::/8"]))
        let url = try XCTUnwrap(URL(string: "http://169.254.169.254/latest/meta-data/"))
        await expectRefusal(wide, url)
        await DownloadTesting.assertIdle(d)
        await DownloadTesting.assertIdle(wide)
    }

    func testListsAndPerRequestPolicies() async throws {
        let f = try fixture
        let expected = LoopbackFixture.files["small.png"]
        let port = f.nginx.port
        let byPrefix = try downloader(DestinationPolicy(allowList: ["127.0.0.0/8"], denyList: ["localhost"]))
        await expectBody(byPrefix, f.nginx.url("/small.png"), expected)
        await expectRefusal(byPrefix, try XCTUnwrap(URL(string: "http://localhost:\(port)/small.png")),
                            "destination localhost is on the policy's deny-list")
        let denied = try downloader(DestinationPolicy(allowsLoopback: true, denyList: ["127.0.0.1"]))
        await expectRefusal(denied, try XCTUnwrap(URL(string: "http://2130706433:\(port)/small.png")),
                            "destination 127.0.0.1 is on the policy's deny-list")

        // A request's policy replaces the downloader's, both ways.
        let strict = try downloader(.publicOnly)
        await expectBody(strict, f.nginx.url("/small.png"), policy: DestinationPolicy(allowsLoopback: true), expected)
        let open = try downloader(DestinationPolicy(allowsLoopback: true))
        await expectRefusal(open, f.nginx.url("/small.png"), policy: .publicOnly)
        // A bad entry in a request's policy fails that request only.
        let bad = DestinationPolicy(allowList: ["10.0.0.0/40"])
        switch await DownloadTesting.result(open, DownloadRequest(url: f.nginx.url("/small.png"), destinationPolicy: bad)) {
        case .failure(let e) where e.code == .invalidArgument: XCTAssertTrue(e.message.contains("10.0.0.0/40"), e.message)
        case let other: XCTFail("\(other)")
        }
        await expectBody(open, f.nginx.url("/small.png"), expected)
        for d in [byPrefix, denied, strict, open] { await DownloadTesting.assertIdle(d) }
    }

    func testTheRefusalIsALastingFailureWithAStatus() {
        let e = ImageKitError.destinationRefused("destination 10.0.0.5 is private, which the policy does not allow")
        XCTAssertEqual(e.code, .destinationRefused)
        XCTAssertTrue(e.isLastingLoadFailure)
        XCTAssertEqual(e.suggestedHTTPStatus, 403)
        XCTAssertEqual(ImageKitError.blocklisted("blocked", original: e).suggestedHTTPStatus, 403)
    }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts, so a test can see whether
/// anything connected to it.
private final class PassiveListener {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket failed: errno \(errno)") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else {
            Glibc.close(fd)
            throw ServerError("bind/listen failed: errno \(errno)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Whether a connection waits in the accept queue (polled without blocking).
    func hasPendingConnection() -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    func close() {
        Glibc.close(fd)
    }
}
