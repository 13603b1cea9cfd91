import Foundation
import ImageKit
import TestServers
import XCTest

/// The downloader against real servers on 127.0.0.1: what each kind of answer,
/// good or bad, becomes.
final class DownloaderHTTPTests: LoopbackTestCase {
    // MARK: - Successful answers

    func testGetWithContentLength() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(r.status, .downloaded)
        XCTAssertEqual(Array(r.data), LoopbackFixture.files["small.png"])
        XCTAssertEqual(r.response.statusCode, 200)
        XCTAssertEqual(r.response.mimeType, "image/png")
        XCTAssertEqual(r.response.headers["content-length"], "2000")
        XCTAssertEqual(r.response.httpVersion, .http1_1)
        XCTAssertEqual(r.metrics.bodyBytes, 2_000)
        XCTAssertEqual(r.metrics.sharedBy, 1)
        XCTAssertGreaterThan(r.metrics.total, .zero)
        XCTAssertEqual(r.metrics.newConnections, 1)
        let again = try await d.download(DownloadRequest(url: f.nginx.url("/medium.bin")))
        XCTAssertEqual(again.metrics.newConnections, 0, "the connection is reused")
        XCTAssertEqual(again.data.count, 300_000)
        await DownloadTesting.assertIdle(d)
    }

    func testGetWithoutContentLength() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.script.url("/no-length?n=70000")))
        XCTAssertNil(r.response.headers["Content-Length"])
        XCTAssertEqual(Array(r.data), LoopbackFixture.scriptPattern(70_000))
    }

    func testChunkedBody() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.script.url("/chunked?n=90000&chunks=7")))
        XCTAssertEqual(r.response.headers["Transfer-Encoding"], "chunked")
        XCTAssertEqual(Array(r.data), LoopbackFixture.scriptPattern(90_000))
    }

    func testGzipIsDecoded() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.nginx.url("/gz/text.txt")))
        XCTAssertEqual(r.response.headers["Content-Encoding"], "gzip")
        XCTAssertEqual(Array(r.data), LoopbackFixture.files["gz/text.txt"])
        XCTAssertEqual(r.metrics.bodyBytes, Int64(r.data.count))
        XCTAssertLessThan(r.metrics.wireBodyBytes * 4, r.metrics.bodyBytes, "the body came compressed")

        let plain = try DownloadTesting.downloader { $0.acceptsCompressedResponses = false }
        let p = try await plain.download(DownloadRequest(url: f.nginx.url("/gz/text.txt")))
        XCTAssertNil(p.response.headers["Content-Encoding"])
        XCTAssertEqual(p.data, r.data)
    }

    func testHeadRequest() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.nginx.url("/medium.bin"), method: .head))
        XCTAssertEqual(r.response.statusCode, 200)
        XCTAssertEqual(r.response.headers["Content-Length"], "300000")
        XCTAssertTrue(r.data.isEmpty)
    }

    func testByteRange() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.acceptableStatusCodes = 200..<300 }
        let r = try await d.download(DownloadRequest(url: f.nginx.url("/medium.bin"), byteRange: 100...199))
        XCTAssertEqual(r.response.statusCode, 206)
        XCTAssertEqual(Array(r.data), Array(LoopbackFixture.files["medium.bin"]![100...199]))
    }

    func testDefaultAndRequestHeadersAreSent() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        var request = DownloadRequest(url: f.script.url("/echo"))
        request.headers["X-Trace"] = "abc"
        request.headers["user-agent"] = "Custom/1.0"
        let r = try await d.download(request)
        let sent = try JSONDecoder().decode([String: [String]].self, from: r.data)
        XCTAssertEqual(sent["accept"], [DownloaderConfiguration.defaultAccept])
        XCTAssertEqual(sent["user-agent"], ["Custom/1.0"], "a request header replaces the default of that name")
        XCTAssertEqual(sent["x-trace"], ["abc"])
        XCTAssertNotNil(sent["accept-encoding"]?.first?.contains("gzip"))
    }

    func testHeaderInjectionIsRefused() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        var request = DownloadRequest(url: f.script.url("/echo"))
        request.headers["X-Bad"] = "a\r\nInjected: yes"
        guard await DownloadTesting.result(d, request).failure?.code == .invalidArgument else {
            return XCTFail("a header value with CR LF must be refused")
        }
        await DownloadTesting.assertIdle(d)
    }

    func testBasicAuth() async throws {
        let f = try fixture
        let anonymous = try DownloadTesting.downloader()
        let e = await DownloadTesting.error(anonymous, f.script.url("/auth"))
        XCTAssertEqual(e?.code, .httpStatus)
        guard e?.httpStatus == 401 else { return XCTFail("expected 401, got \(String(describing: e))") }

        let d = try DownloadTesting.downloader { $0.credentials = .init(username: "ann", password: "pa55") }
        let r = try await d.download(DownloadRequest(url: f.script.url("/auth")))
        XCTAssertEqual(String(decoding: r.data, as: UTF8.self), "welcome\n")
    }

    func testCookiesOnlyWhenEnabled() async throws {
        let f = try fixture
        for enabled in [false, true] {
            let d = try DownloadTesting.downloader { $0.usesCookies = enabled }
            _ = try await d.download(DownloadRequest(url: f.script.url("/cookie-set")))
            let r = try await d.download(DownloadRequest(url: f.script.url("/echo")))
            let sent = try JSONDecoder().decode([String: [String]].self, from: r.data)
            XCTAssertEqual(sent["cookie"], enabled ? ["session=s3cret"] : nil, "cookies enabled: \(enabled)")
        }
    }

    func testProgressReachesTheWholeBody() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let seen = Collector<DownloadProgress>()
        let r = try await d.download(DownloadRequest(url: f.nginx.url("/medium.bin"))) { seen.append($0) }
        await DownloadTesting.waitUntil("the last progress report arrives") {
            seen.all.last?.receivedBytes == Int64(r.data.count)
        }
        XCTAssertEqual(seen.all.last?.expectedBytes, 300_000)
        XCTAssertEqual(seen.all.last?.fractionCompleted, 1)
        XCTAssertEqual(seen.all.map(\.receivedBytes), seen.all.map(\.receivedBytes).sorted())
    }

    // MARK: - Status codes and conditional requests

    func testNotFound() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let e = await DownloadTesting.error(d, f.nginx.url("/missing.png"))
        guard e?.httpStatus == 404, let message = e?.message else {
            return XCTFail("expected 404, got \(String(describing: e))")
        }
        XCTAssertTrue(message.contains("404"), message)
    }

    func testServerError() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        guard await DownloadTesting.error(d, f.nginx.url("/status/500"))?.httpStatus == 500 else {
            return XCTFail("expected 500")
        }
        let lenient = try DownloadTesting.downloader { $0.acceptableStatusCodes = 200..<600 }
        let r = try await lenient.download(DownloadRequest(url: f.nginx.url("/status/500")))
        XCTAssertEqual(r.response.statusCode, 500)
        XCTAssertEqual(String(decoding: r.data, as: UTF8.self), "boom\n")
    }

    func testNotModifiedWithEntityTag() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let first = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        let tag = try XCTUnwrap(first.response.entityTag)
        let validators = DownloadRequest.Validators(entityTag: tag, lastModified: first.response.lastModified)
        let again = try await d.download(DownloadRequest(url: f.nginx.url("/small.png"), validators: validators))
        XCTAssertEqual(again.status, .notModified)
        XCTAssertEqual(again.response.statusCode, 304)
        XCTAssertTrue(again.data.isEmpty)

        let dated = DownloadRequest.Validators(lastModified: try XCTUnwrap(first.response.lastModified))
        let byDate = try await d.download(DownloadRequest(url: f.nginx.url("/small.png"), validators: dated))
        XCTAssertEqual(byDate.status, .notModified, "If-Modified-Since alone")

        let stale = DownloadRequest.Validators(entityTag: "\"not-the-tag\"")
        let changed = try await d.download(DownloadRequest(url: f.nginx.url("/small.png"), validators: stale))
        XCTAssertEqual(changed.status, .downloaded)
        XCTAssertEqual(changed.data, first.data)
    }

    // MARK: - Redirects

    func testRedirectChain() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.nginx.url("/r1")))
        XCTAssertEqual(r.metrics.redirectCount, 3)
        XCTAssertEqual(r.response.url, f.nginx.url("/small.png"))
        XCTAssertEqual(Array(r.data), LoopbackFixture.files["small.png"])

        let strict = try DownloadTesting.downloader { $0.maxRedirects = 2 }
        guard await DownloadTesting.error(strict, f.nginx.url("/r1"))?.code == .tooManyRedirects else {
            return XCTFail("three redirects with a limit of two must fail")
        }
    }

    func testRedirectLoop() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let e = await DownloadTesting.error(d, f.nginx.url("/loop-a"))
        XCTAssertEqual(e?.code, .tooManyRedirects, "\(String(describing: e))")
    }

    func testRedirectToFileAndFTPIsRefused() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        for path in ["/redirect-file", "/redirect-ftp"] {
            let e = await DownloadTesting.error(d, f.script.url(path))
            guard e?.code == .disallowedProtocol else { return XCTFail("\(path): \(String(describing: e))") }
        }
        for url in ["file:///etc/passwd", "ftp://127.0.0.1:21/image.png"] {
            let e = await DownloadTesting.error(d, URL(string: url)!)
            guard e?.code == .disallowedProtocol else { return XCTFail("\(url): \(String(describing: e))") }
        }
        await DownloadTesting.assertIdle(d)
    }

    // MARK: - Timeouts and broken transfers

    func testSlowFirstByteTimesOut() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.timeout = .milliseconds(300) }
        let e = await DownloadTesting.error(d, f.script.url("/slow-first-byte?ms=10000"))
        guard e?.code == .timedOut, let message = e?.message else { return XCTFail("\(String(describing: e))") }
        XCTAssertTrue(message.contains("timed out"), message)
    }

    func testSlowBodyHitsTheLowSpeedLimit() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.lowSpeedLimit = .init(bytesPerSecond: 100, seconds: 1) }
        let e = await DownloadTesting.error(d, f.script.url("/slow-body?n=1000&ms=200"))
        guard e?.code == .timedOut, let message = e?.message else { return XCTFail("\(String(describing: e))") }
        XCTAssertTrue(message.lowercased().contains("too slow"), message)
    }

    func testSlowBodyHitsTheTotalTimeout() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let request = DownloadRequest(url: f.script.url("/slow-body?n=1000&ms=100"), timeout: .milliseconds(400))
        guard await DownloadTesting.result(d, request).failure?.code == .timedOut else {
            return XCTFail("the per-request timeout must fire")
        }
    }

    func testConnectionResetMidBody() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let e = await DownloadTesting.error(d, f.script.url("/reset?n=100000&sent=10000"))
        guard e?.code == .network else { return XCTFail("\(String(describing: e))") }
    }

    func testBodyShorterThanContentLength() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let e = await DownloadTesting.error(d, f.script.url("/short?n=10000&sent=5000"))
        guard e?.code == .network, let message = e?.message else { return XCTFail("\(String(describing: e))") }
        XCTAssertTrue(message.contains("5000"), message)
    }

    func testAStatusLineWithoutAThreeDigitStatusIsNoResponse() async throws {
        let f = try fixture
        // libcurl reads these as statuses 2, 222222222 and -1 (past INT_MAX) and succeeds.
        let lines = ["HTTP/22%20200%20OK", "HTTP/2222222222", "HTTP/2222222222222222222222"]
        let lenient = try DownloadTesting.downloader { $0.acceptableStatusCodes = 0..<0 }  // any status
        for line in lines {
            let e = await DownloadTesting.error(lenient, f.script.url("/bad-status?line=\(line)"))
            guard e?.code == .network, let message = e?.message else { XCTFail("\(line): \(String(describing: e))"); continue }
            XCTAssertTrue(message.contains("has no valid status"), message)
        }
        let good = await DownloadTesting.result(lenient, DownloadRequest(url: f.script.url("/bad-status?line=HTTP/1.1%20299%20X")))
        XCTAssertEqual(try good.get().response.statusCode, 299, "a three-digit status is read")
        XCTAssertEqual(try good.get().data, Data("x".utf8))
    }

    /// A folded field (a line that starts with white space continues the one above it, as
    /// RFC 9112 still lets a recipient read it) is one value, not a field named " second".
    func testFoldedFieldLinesContinueTheFieldAbove() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let r = try await d.download(DownloadRequest(url: f.script.url("/folded")))
        let folded = try XCTUnwrap(r.response.headers["X-Folded"])
        XCTAssertEqual(folded.split(whereSeparator: { $0 == " " }), ["first", "second"], folded)
        XCTAssertEqual(r.response.headers["X-Empty"], "filled")
        XCTAssertEqual(r.response.headers["X-After"], "yes")
        XCTAssertEqual(r.response.headers.filter { $0.name.first?.isWhitespace ?? true }.count, 0)
        XCTAssertEqual(r.data, Data("ok\n".utf8))
    }

    func testConnectionRefused() async throws {
        let d = try DownloadTesting.downloader()
        let port = try Loopback.freePort()
        let e = await DownloadTesting.error(d, URL(string: "http://127.0.0.1:\(port)/x.png")!)
        guard e?.code == .connectFailed else { return XCTFail("\(String(describing: e))") }
    }

    // MARK: - Limits and validation

    func testBodyOverTheCap() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.maxBodyBytes = 100_000 }
        let fromLength = await DownloadTesting.error(d, f.nginx.url("/medium.bin"))
        XCTAssertEqual(fromLength?.code, .responseTooLarge, "refused from Content-Length: \(String(describing: fromLength))")
        for path in ["/no-length?n=300000", "/chunked?n=300000&chunks=30"] {
            let counted = await DownloadTesting.error(d, f.script.url(path))
            XCTAssertEqual(counted?.code, .responseTooLarge, "\(path): \(String(describing: counted))")
        }
        let fits = try await d.download(DownloadRequest(url: f.script.url("/no-length?n=100000")))
        XCTAssertEqual(fits.data.count, 100_000)
        let head = try await d.download(DownloadRequest(url: f.nginx.url("/medium.bin"), method: .head))
        XCTAssertEqual(head.response.headers["Content-Length"], "300000", "HEAD has no body to refuse")
        await DownloadTesting.assertIdle(d)
    }

    func testWrongContentType() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.acceptableContentTypes = ["image/*"] }
        let e = await DownloadTesting.error(d, f.nginx.url("/page.html"))
        guard e?.code == .unacceptableContentType, let message = e?.message else { return XCTFail("\(String(describing: e))") }
        XCTAssertTrue(message.contains("text/html"), message)
        let png = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(png.data.count, 2_000)

        let exact = try DownloadTesting.downloader { $0.acceptableContentTypes = ["image/jpeg"] }
        guard await DownloadTesting.error(exact, f.nginx.url("/small.png"))?.code == .unacceptableContentType else {
            return XCTFail("image/png is not image/jpeg")
        }
        await DownloadTesting.assertIdle(d)
    }

    func testResponseValidator() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.responseValidator = { response in
                if response.headers["Content-Length"] == "300000" { throw ImageKitError.invalidResponse("too big for us") }
            }
        }
        guard case .invalidResponse("too big for us")? = await DownloadTesting.error(d, f.nginx.url("/medium.bin")) else {
            return XCTFail("the validator's error must reach the caller")
        }
        let ok = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(ok.data.count, 2_000)
    }

    // MARK: - TLS and HTTP/2

    func testHTTP2OverTLSWithCustomCA() async throws {
        let f = try fixture
        let ca = try XCTUnwrap(f.nginx.caFile)
        let d = try DownloadTesting.downloader { $0.tls = .init(caFile: ca) }
        let results = try await withThrowingTaskGroup(of: DownloadResult.self) { group in
            for i in 0..<12 {
                group.addTask { try await d.download(DownloadRequest(url: f.nginx.tlsURL("/files/\(i).bin"))) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results.count, 12)
        for r in results {
            XCTAssertEqual(r.response.httpVersion, .http2)
            let name = String(r.response.url.path.dropFirst())
            XCTAssertEqual(Array(r.data), LoopbackFixture.files[name], name)
        }
        XCTAssertEqual(results.map(\.metrics.newConnections).reduce(0, +), 1,
                       "every stream multiplexed on one connection")
        XCTAssertGreaterThan(results.map(\.metrics.tlsHandshake).max() ?? .zero, .zero)
    }

    func testTLSVerificationFailsWithoutTheCA() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let e = await DownloadTesting.error(d, f.nginx.tlsURL("/small.png"))
        guard e?.code == .tlsFailed else { return XCTFail("\(String(describing: e))") }

        var insecure = DownloadRequest(url: f.nginx.tlsURL("/small.png"))
        insecure.tls = .init(verifiesPeer: false)
        let r = try await d.download(insecure)
        XCTAssertEqual(r.data.count, 2_000)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
