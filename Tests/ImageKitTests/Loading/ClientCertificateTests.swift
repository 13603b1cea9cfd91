import Foundation
import ImageKit
import TestServers
import XCTest

/// TLS client certificates (mutual TLS) against nginx with `ssl_verify_client on`: per
/// downloader, per request, encrypted keys, and that a connection authenticated with one
/// certificate never carries a request with another or none.
final class ClientCertificateTests: XCTestCase {
    /// nginx demanding a certificate from the client CA, and the PEM files the tests present.
    final class Fixture: Sendable {
        let nginx: NginxServer
        let directory: URL

        /// Certificate and key of "imagekit-client", signed by the client CA.
        var certificate: String { path("client.pem") }
        var key: String { path("client.key") }
        /// The same key encrypted with `password`.
        var encryptedKey: String { path("client-encrypted.key") }
        let password = "correct horse"
        /// Certificate and key in one file.
        var combined: String { path("client-combined.pem") }
        /// A certificate signed by a CA nginx does not trust.
        var strangerCertificate: String { path("stranger.pem") }
        var strangerKey: String { path("stranger.key") }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-mtls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let d = directory.path
            try Self.makeCA(named: "client-ca", in: d)
            try Self.makeCA(named: "stranger-ca", in: d)
            try Self.makeLeaf(named: "client", commonName: "imagekit-client", ca: "client-ca", in: d)
            try Self.makeLeaf(named: "stranger", commonName: "stranger", ca: "stranger-ca", in: d)
            try TestServers.ChildProcess.run(["openssl", "pkey", "-in", "\(d)/client.key", "-aes256", "-passout", "pass:\(password)",
                                  "-out", "\(d)/client-encrypted.key"])
            let combined = try Data(contentsOf: URL(fileURLWithPath: "\(d)/client.pem"))
                + Data(contentsOf: URL(fileURLWithPath: "\(d)/client.key"))
            try combined.write(to: URL(fileURLWithPath: "\(d)/client-combined.pem"))
            nginx = try NginxServer(files: ["small.png": LoopbackFixture.files["small.png"]!], locations: """
                ssl_verify_client on;
                ssl_client_certificate \(d)/client-ca.pem;
                location = /whoami { return 200 "$ssl_client_s_dn"; }
            """, tls: true)
        }

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        func stop() {
            nginx.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        private static func makeCA(named name: String, in d: String) throws {
            try TestServers.ChildProcess.run([
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "\(d)/\(name).key", "-out", "\(d)/\(name).pem", "-days", "2", "-subj", "/CN=\(name)",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        }

        private static func makeLeaf(named name: String, commonName: String, ca: String, in d: String) throws {
            try TestServers.ChildProcess.run([
                "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "\(d)/\(name).key", "-out", "\(d)/\(name).csr", "-subj", "/CN=\(commonName)",
            ])
            try "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
                .write(toFile: "\(d)/\(name).ext", atomically: true, encoding: .utf8)
            try TestServers.ChildProcess.run([
                "openssl", "x509", "-req", "-in", "\(d)/\(name).csr", "-CA", "\(d)/\(ca).pem", "-CAkey", "\(d)/\(ca).key",
                "-CAcreateserial", "-out", "\(d)/\(name).pem", "-days", "2", "-extfile", "\(d)/\(name).ext",
            ])
        }
    }

    static let servers = SharedServer(start: { try Fixture() }, stop: { $0.stop() })

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    private var fixture: Fixture { get throws { try Self.servers.get() } }

    /// TLS options trusting the test server's CA, presenting `certificate`.
    private func tls(_ certificate: ClientCertificate?) throws -> DownloaderConfiguration.TLSOptions {
        DownloaderConfiguration.TLSOptions(caFile: try fixture.nginx.caFile, clientCertificate: certificate)
    }

    private func downloader(_ certificate: ClientCertificate?) throws -> Downloader {
        let options = try tls(certificate)
        return try DownloadTesting.downloader { $0.tls = options }
    }

    /// The subject nginx saw, or the failure.
    private func whoami(_ d: Downloader, _ options: DownloaderConfiguration.TLSOptions? = nil) async throws
        -> Result<String, ImageKitError> {
        let request = DownloadRequest(url: try fixture.nginx.tlsURL("/whoami"), tls: options)
        return await DownloadTesting.result(d, request).map { String(decoding: $0.data, as: UTF8.self) }
    }

    /// Checks that nginx saw `subject` for a request under `options`.
    private func expectSubject(_ d: Downloader, _ options: DownloaderConfiguration.TLSOptions? = nil,
                               is subject: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        let seen = try await whoami(d, options)
        XCTAssertEqual(seen, .success(subject), file: file, line: line)
    }

    private func expectRefusedByServer(_ result: Result<String, ImageKitError>,
                                       file: StaticString = #filePath, line: UInt = #line) {
        guard case .failure(let e) = result, e.httpStatus == 400 else {
            return XCTFail("expected nginx's 400 for a missing or untrusted certificate, got \(result)",
                           file: file, line: line)
        }
    }

    func testTheServerRefusesAClientWithoutACertificate() async throws {
        let d = try downloader(nil)
        expectRefusedByServer(try await whoami(d))
        await DownloadTesting.assertIdle(d)
    }

    func testACertificateForTheWholeDownloader() async throws {
        let f = try fixture
        let d = try downloader(ClientCertificate(certificateFile: f.certificate, keyFile: f.key))
        try await expectSubject(d, is: "CN=imagekit-client")
        let image = try await DownloadTesting.result(d, DownloadRequest(url: f.nginx.tlsURL("/small.png"))).get()
        XCTAssertEqual(image.response.httpVersion, .http2)
        // A request's TLS options replace the downloader's, certificate included.
        expectRefusedByServer(try await whoami(d, try tls(nil)))
        try await expectSubject(d, is: "CN=imagekit-client")
        await DownloadTesting.assertIdle(d)
    }

    func testACertificateForOneRequestIsNotLentToOthers() async throws {
        let f = try fixture
        let d = try downloader(nil)
        let mine = try tls(ClientCertificate(certificateFile: f.certificate, keyFile: f.key))
        try await expectSubject(d, mine, is: "CN=imagekit-client")
        // The authenticated connection stays open, but not for a request without the certificate.
        expectRefusedByServer(try await whoami(d))
        try await expectSubject(d, mine, is: "CN=imagekit-client")
        // Both at once, to the same host: each is answered as itself.
        let url = f.nginx.tlsURL("/whoami")
        async let with = DownloadTesting.result(d, DownloadRequest(url: url, tls: mine))
        async let without = DownloadTesting.result(d, DownloadRequest(url: url))
        let (withResult, withoutResult) = await (with, without)
        XCTAssertEqual(withResult.map { String(decoding: $0.data, as: UTF8.self) }, .success("CN=imagekit-client"))
        expectRefusedByServer(withoutResult.map { String(decoding: $0.data, as: UTF8.self) })
        await DownloadTesting.assertIdle(d)
    }

    func testKeyFilesPasswordsAndStrangers() async throws {
        let f = try fixture
        let d = try downloader(nil)
        let combined = try tls(ClientCertificate(certificateFile: f.combined))
        try await expectSubject(d, combined, is: "CN=imagekit-client")
        let encrypted = try tls(ClientCertificate(certificateFile: f.certificate, keyFile: f.encryptedKey,
                                                  keyPassword: f.password))
        try await expectSubject(d, encrypted, is: "CN=imagekit-client")

        // (On a downloader of its own: the open connection above already proved this certificate.)
        let wrongPassword = try tls(ClientCertificate(certificateFile: f.certificate, keyFile: f.encryptedKey,
                                                      keyPassword: "wrong"))
        let fresh = try downloader(nil)
        guard case .failure(let e) = try await whoami(fresh, wrongPassword), e.code == .tlsFailed else {
            return XCTFail("a wrong key password must fail the handshake")
        }
        await DownloadTesting.assertIdle(fresh)
        let missing = try tls(ClientCertificate(certificateFile: f.path("missing.pem")))
        guard case .failure(let e) = try await whoami(d, missing), e.code == .tlsFailed else {
            return XCTFail("a missing certificate file must fail the handshake")
        }
        XCTAssertTrue(e.message.contains("missing.pem"), e.message)
        let stranger = try tls(ClientCertificate(certificateFile: f.strangerCertificate, keyFile: f.strangerKey))
        expectRefusedByServer(try await whoami(d, stranger))

        let newline = try tls(ClientCertificate(certificateFile: f.certificate + "\n"))
        guard case .failure(let e) = try await whoami(d, newline), e.code == .invalidArgument else {
            return XCTFail("a file name with a line break is refused before the transfer")
        }
        await DownloadTesting.assertIdle(d)
    }
}
