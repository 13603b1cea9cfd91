import CImageCore
import Foundation
@testable import ImageKit
import XCTest

/// The coalescing key: a request with the configuration applied. Equal keys share one
/// transfer, so every request-affecting option must be in it; values that cannot go on
/// the wire are refused; the C request carries exactly the key's values.
final class ResolvedRequestTests: XCTestCase {
    private func resolve(_ request: DownloadRequest,
                         _ configure: (inout DownloaderConfiguration) -> Void = { _ in }) throws -> ResolvedRequest {
        var configuration = DownloaderConfiguration()
        configure(&configuration)
        return try ResolvedRequest(request, defaults: ResolvedRequest.Defaults(configuration))
    }

    private func request(_ url: String = "http://h.test/a.png") -> DownloadRequest {
        DownloadRequest(url: URL(string: url)!)
    }

    /// The thrown error's message, or nil when nothing was thrown.
    private func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ImageKitError where error.code == .invalidArgument {
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    func testEqualRequestsHaveEqualKeys() throws {
        let a = try resolve(request())
        let b = try resolve(request())
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.hashValue, b.hashValue)
        XCTAssertEqual(Set([a, b]).count, 1)
    }

    func testEveryRequestAffectingOptionChangesTheKey() throws {
        let base = try resolve(request())
        var variants: [String: DownloadRequest] = [:]
        variants["url"] = request("http://h.test/b.png")
        variants["method"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!, method: .head)
        variants["header"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!, headers: ["X-A": "1"])
        variants["validators"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!,
                                                 validators: .init(entityTag: "\"v1\""))
        variants["range"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!, byteRange: 0...99)
        variants["timeout"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!, timeout: .seconds(3))
        variants["tls"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!, tls: .init(verifiesPeer: false))
        variants["cookies"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!, usesCookies: true)
        variants["destination policy"] = DownloadRequest(url: URL(string: "http://h.test/a.png")!,
                                                         destinationPolicy: .init(allowsLoopback: true))
        variants["client certificate"] = DownloadRequest(
            url: URL(string: "http://h.test/a.png")!, tls: .init(clientCertificate: .init(certificateFile: "/c.pem")))
        for (name, variant) in variants {
            XCTAssertNotEqual(try resolve(variant), base, name)
        }
        XCTAssertEqual(Set(try variants.values.map { try resolve($0) }).count, variants.count, "all different")
    }

    func testSettingAnOptionToItsDefaultKeepsTheKey() throws {
        let base = try resolve(request())
        var same = request()
        same.timeout = .seconds(15)
        same.usesCookies = false
        same.tls = .init()
        same.destinationPolicy = .publicOnly
        XCTAssertEqual(try resolve(same), base)
    }

    func testThePolicyIsBuiltOncePerDownloaderUnlessARequestNamesAnother() throws {
        var configuration = DownloaderConfiguration()
        configuration.destinationPolicy = DestinationPolicy(allowList: ["images.internal"])
        let defaults = try ResolvedRequest.Defaults(configuration)
        let plain = try ResolvedRequest(request(), defaults: defaults)
        XCTAssertTrue(plain.policy === defaults.policy)
        var restated = request()
        restated.destinationPolicy = configuration.destinationPolicy
        XCTAssertTrue(try ResolvedRequest(restated, defaults: defaults).policy === defaults.policy,
                      "the configuration's policy named again is not built again")
        var own = request()
        own.destinationPolicy = .publicOnly
        let resolved = try ResolvedRequest(own, defaults: defaults)
        XCTAssertFalse(resolved.policy === defaults.policy)
        XCTAssertNotEqual(resolved, plain)
        own.destinationPolicy = DestinationPolicy(allowList: ["10.0.0.0/33"])
        XCTAssertEqual(refusal { _ = try ResolvedRequest(own, defaults: defaults) },
                       "fetch policy: allow-list entry \"10.0.0.0/33\" is not a host name, an IP address or a CIDR prefix")
    }

    func testCertificatesAndProxiesThatCannotReachLibcurlWholeAreRefused() throws {
        let bad = "a\nb"
        let certificates = [ClientCertificate(certificateFile: bad), ClientCertificate(certificateFile: "/c.pem", keyFile: bad),
                            ClientCertificate(certificateFile: "/c.pem", keyPassword: bad)]
        let names = ["client certificate file name", "client key file name", "client key password"]
        for (certificate, name) in zip(certificates, names) {
            let expected = "download: the \(name) contains a line break or NUL"
            XCTAssertEqual(refusal { _ = try resolve(self.request()) { $0.tls.clientCertificate = certificate } }, expected)
            var r = request()
            r.tls = .init(clientCertificate: certificate)
            XCTAssertEqual(refusal { _ = try resolve(r) }, expected)
        }
        XCTAssertEqual(refusal { _ = try resolve(self.request()) { $0.proxy = "http://p\r\n:3128" } },
                       "download: the proxy contains a line break or NUL")
    }

    func testRequestHeadersReplaceDefaultsByNameInAnyCase() throws {
        var r = request()
        r.headers["user-agent"] = "mine"
        r.headers["X-Extra"] = "1"
        let resolved = try resolve(r)
        XCTAssertEqual(resolved.wire.headerLines,
                       ["Accept: \(DownloaderConfiguration.defaultAccept)", "user-agent: mine", "X-Extra: 1"])
        let plain = try resolve(request())
        XCTAssertEqual(plain.wire.headerLines, ["Accept: \(DownloaderConfiguration.defaultAccept)",
                                                "User-Agent: \(DownloaderConfiguration.defaultUserAgent)"])
    }

    func testConfigurationValuesAreApplied() throws {
        let r = try resolve(request()) {
            $0.timeout = .milliseconds(1500)
            $0.connectTimeout = .microseconds(10)
            $0.lowSpeedLimit = .init(bytesPerSecond: 1000, seconds: 7)
            $0.maxRedirects = 2
            $0.acceptsCompressedResponses = false
            $0.maxBodyBytes = 0
            $0.acceptableStatusCodes = 200..<204
            $0.credentials = .init(username: "u", password: "p")
            $0.usesCookies = true
            $0.tls = .init(verifiesPeer: true, caFile: "/ca.pem")
        }
        XCTAssertEqual(r.wire.timeoutMs, 1500)
        XCTAssertEqual(r.wire.connectTimeoutMs, 1, "a positive duration is at least 1 ms")
        XCTAssertEqual(r.wire.lowSpeedBytes, 1000)
        XCTAssertEqual(r.wire.lowSpeedSeconds, 7)
        XCTAssertEqual(r.wire.maxRedirects, 2)
        XCTAssertFalse(r.wire.acceptEncoding)
        XCTAssertEqual(r.wire.maxBodyBytes, 1, "at least one byte")
        XCTAssertEqual([r.wire.statusMin, r.wire.statusEnd], [200, 204])
        XCTAssertEqual(r.wire.username, "u")
        XCTAssertEqual(r.wire.password, "p")
        XCTAssertTrue(r.wire.cookies)
        XCTAssertEqual(r.wire.caFile, "/ca.pem")
    }

    func testRequestOverridesWinOverTheConfiguration() throws {
        var r = request()
        r.timeout = .seconds(2)
        r.tls = .init(verifiesPeer: false, caFile: "/other.pem")
        r.usesCookies = false
        let resolved = try resolve(r) {
            $0.usesCookies = true
            $0.tls = .init(caFile: "/ca.pem")
        }
        XCTAssertEqual(resolved.wire.timeoutMs, 2000)
        XCTAssertFalse(resolved.wire.verifiesPeer)
        XCTAssertEqual(resolved.wire.caFile, "/other.pem")
        XCTAssertFalse(resolved.wire.cookies)
    }

    func testAuthorityNamesHostAndPort() throws {
        XCTAssertEqual(try resolve(request("http://h.test/x")).authority, "h.test:80")
        XCTAssertEqual(try resolve(request("https://h.test/x")).authority, "h.test:443")
        XCTAssertEqual(try resolve(request("HTTPS://h.test/x")).authority, "h.test:443")
        XCTAssertEqual(try resolve(request("http://h.test:8080/x")).authority, "h.test:8080")
    }

    func testValidatorsMakeTheRequestConditional() throws {
        XCTAssertFalse(try resolve(request()).isConditional)
        var tagged = request()
        tagged.validators = .init(entityTag: "\"v1\"")
        XCTAssertTrue(try resolve(tagged).isConditional)
        var dated = request()
        dated.validators = .init(lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        let resolved = try resolve(dated)
        XCTAssertTrue(resolved.isConditional)
        XCTAssertEqual(resolved.wire.ifModifiedSince, "Wed, 21 Oct 2015 07:28:00 GMT")
        var empty = request()
        empty.validators = .init()
        XCTAssertFalse(try resolve(empty).isConditional, "validators with no value send nothing")
    }

    func testByteRange() throws {
        var r = request()
        r.byteRange = 10...19
        XCTAssertEqual(try resolve(r).wire.range, "10-19")
        r.byteRange = -1...19
        XCTAssertNotNil(refusal { _ = try resolve(r) })
    }

    func testTextThatWouldBreakTheHeaderBlockIsRefused() throws {
        for bad in ["a\r\nX-Injected: 1", "a\nb", "a\u{0}b"] {
            var header = request()
            header.headers["X-A"] = bad
            XCTAssertEqual(refusal { _ = try resolve(header) }, "download: the value of header X-A contains a line break or NUL")
            var tag = request()
            tag.validators = .init(entityTag: bad)
            XCTAssertEqual(refusal { _ = try resolve(tag) }, "download: the entity tag contains a line break or NUL")
            XCTAssertNotNil(refusal { _ = try resolve(self.request()) { $0.defaultHeaders["X-D"] = bad } })
            XCTAssertNotNil(refusal {
                _ = try resolve(self.request()) { $0.credentials = .init(username: bad, password: "p") }
            })
        }
    }

    func testHeaderNamesMustBeTokens() throws {
        for bad in ["", "X A", "X:A", "X\tA", "Ä"] {
            var r = request()
            r.headers.add(name: bad, value: "1")
            XCTAssertEqual(refusal { _ = try resolve(r) }, "download: \"\(bad)\" is not a valid header name", bad)
        }
        var fine = request()
        fine.headers.add(name: "X-Good_1.2~", value: "")
        XCTAssertNil(refusal { _ = try resolve(fine) })
    }

    func testMilliseconds() {
        XCTAssertEqual(ResolvedRequest.milliseconds(.zero), 0)
        XCTAssertEqual(ResolvedRequest.milliseconds(.nanoseconds(1)), 1)
        XCTAssertEqual(ResolvedRequest.milliseconds(.milliseconds(1234)), 1234)
        XCTAssertEqual(ResolvedRequest.milliseconds(.seconds(-5)), 0)
        XCTAssertEqual(ResolvedRequest.milliseconds(.seconds(10_000_000)), UInt32.max)
    }

    func testTheCRequestCarriesTheKeysValues() throws {
        var r = DownloadRequest(url: URL(string: "http://h.test/a.png")!, method: .head, headers: ["X-A": "1"],
                                validators: .init(entityTag: "\"e\"", lastModified: "yesterday"), byteRange: 0...9)
        r.tls = .init(verifiesPeer: false, caFile: "/ca.pem")
        let resolved = try resolve(r) { $0.credentials = .init(username: "u", password: "p") }
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        let seen = resolved.withCRequest { req -> [String?] in
            var values = [text(req.url), text(req.range), text(req.if_none_match), text(req.if_modified_since),
                          text(req.username), text(req.password), text(req.ca_file)]
            for i in 0..<req.header_count { values.append(text(req.headers![i])) }
            values.append(req.method == IC_FETCH_HEAD ? "HEAD" : "GET")
            values.append(req.insecure == 1 ? "insecure" : "verified")
            values.append("\(req.timeout_ms) \(req.status_min) \(req.status_end) \(req.max_redirects)")
            return values
        }
        XCTAssertEqual(seen, ["http://h.test/a.png", "0-9", "\"e\"", "yesterday", "u", "p", "/ca.pem",
                              "Accept: \(DownloaderConfiguration.defaultAccept)",
                              "User-Agent: \(DownloaderConfiguration.defaultUserAgent)", "X-A: 1",
                              "HEAD", "insecure", "15000 200 300 5"])
        let plain = try resolve(request()).withCRequest { req in
            [req.range, req.if_none_match, req.if_modified_since, req.username, req.password, req.ca_file]
                .map { $0 == nil }
        }
        XCTAssertEqual(plain, Array(repeating: true, count: 6), "absent values are NULL")
    }

    func testTheCRequestCarriesThePolicyCertificateAndProxy() throws {
        var r = request()
        r.tls = .init(clientCertificate: .init(certificateFile: "/c.pem", keyFile: "/k.pem", keyPassword: "pw"))
        let resolved = try resolve(r) { $0.proxy = "http://proxy.test:3128" }
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        let seen = resolved.withCRequest { req in
            [text(req.client_cert), text(req.client_key), text(req.client_key_password), text(req.proxy)]
        }
        XCTAssertEqual(seen, ["/c.pem", "/k.pem", "pw", "http://proxy.test:3128"])
        XCTAssertEqual(resolved.withCRequest { $0.policy }, resolved.policy.pointer)
        let plain = try resolve(request()).withCRequest { req in
            [req.client_cert, req.client_key, req.client_key_password, req.proxy].map { $0 == nil }
        }
        XCTAssertEqual(plain, [true, true, true, true], "absent values are NULL")
    }
}
