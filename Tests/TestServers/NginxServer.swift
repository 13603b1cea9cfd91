import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// nginx on 127.0.0.1, configured in a temporary directory: static files over
/// HTTP/1.1, and with `tls` also HTTPS with HTTP/2 under a certificate signed by
/// a CA made for the run (``caFile``).
public final class NginxServer: Sendable {
    /// The temporary directory holding the configuration, logs and document root.
    public let directory: URL
    /// The plain HTTP port.
    public let port: Int
    /// The HTTPS (HTTP/2) port, when started with TLS.
    public let tlsPort: Int?
    /// The PEM file of the CA that signed the server certificate, when started with TLS.
    public let caFile: String?
    private let supervisor: ChildProcess

    /// Writes `files` (path under the root → bytes) and starts nginx.
    /// - Parameter locations: extra `location` blocks for the server.
    public init(files: [String: [UInt8]], locations: String = "", tls: Bool = false) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-nginx-\(UUID().uuidString)")
        let root = dir.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (path, bytes) in files {
            let file = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: file)
        }
        let ca = tls ? try Self.makeCertificates(in: dir) : nil
        var lastError = ""
        for _ in 0..<3 {
            let port = try Loopback.freePort()
            let tlsPort = tls ? try Loopback.freePort() : nil
            let conf = dir.appendingPathComponent("nginx.conf")
            try Self.config(dir: dir, port: port, tlsPort: tlsPort, locations: locations)
                .write(to: conf, atomically: true, encoding: .utf8)
            let child = try ChildProcess([
                "python3", ScriptServer.script, "supervise", "--",
                Self.nginxPath, "-p", dir.path, "-c", conf.path, "-e", dir.appendingPathComponent("error.log").path,
            ])
            _ = try child.readLine()
            if Loopback.waitUntilListening(port, child: child),
               tlsPort.map({ Loopback.waitUntilListening($0, child: child) }) ?? true {
                directory = dir
                self.port = port
                self.tlsPort = tlsPort
                caFile = ca
                supervisor = child
                return
            }
            child.stop()
            lastError = (try? String(contentsOf: dir.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        }
        try? FileManager.default.removeItem(at: dir)
        throw ServerError("nginx did not start: \(lastError)")
    }

    /// `http://127.0.0.1:port` followed by `path`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// `https://127.0.0.1:tlsPort` followed by `path`.
    public func tlsURL(_ path: String) -> URL {
        URL(string: "https://127.0.0.1:\(tlsPort ?? 0)\(path)")!
    }

    /// The access log's lines so far (one per request).
    public func accessLog() -> [String] {
        let file = directory.appendingPathComponent("access.log")
        // Foundation (Swift 6.3) leaks a 4 KiB buffer for each empty file it reads, which LSan
        // reports under `make sanitize`: an empty log is not read.
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        guard size > 0 else { return [] }
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Stops nginx and removes the directory.
    public func stop() {
        supervisor.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static var nginxPath: String {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "nginx"
    }

    private static func config(dir: URL, port: Int, tlsPort: Int?, locations: String) -> String {
        let d = dir.path
        let tls = tlsPort.map { p in
            """
                    listen 127.0.0.1:\(p) ssl http2;
                    ssl_certificate \(d)/server.pem;
                    ssl_certificate_key \(d)/server.key;
            """
        } ?? ""
        return """
        \(geteuid() == 0 ? "user root;" : "")
        daemon off;
        worker_processes 1;
        pid \(d)/nginx.pid;
        error_log \(d)/error.log warn;
        events { worker_connections 1024; }
        http {
            access_log \(d)/access.log;
            client_body_temp_path \(d)/tmp-body;
            proxy_temp_path \(d)/tmp-proxy;
            fastcgi_temp_path \(d)/tmp-fastcgi;
            uwsgi_temp_path \(d)/tmp-uwsgi;
            scgi_temp_path \(d)/tmp-scgi;
            types {
                image/png png; image/jpeg jpg; image/webp webp; image/gif gif;
                text/html html; text/plain txt;
            }
            default_type application/octet-stream;
            sendfile on;
            tcp_nopush on;
            keepalive_requests 100000;
            keepalive_timeout 60s;
            server {
                listen 127.0.0.1:\(port);
        \(tls)
                root \(d)/www;
        \(locations)
            }
        }
        """
    }

    /// A CA and a server certificate for localhost and 127.0.0.1 signed by it; returns the CA file.
    private static func makeCertificates(in dir: URL) throws -> String {
        let d = dir.path
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try ChildProcess.run(["openssl", "req", "-x509"] + ec + [
            "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.pem", "-days", "2", "-subj", "/CN=ImageKit Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try ChildProcess.run(["openssl", "req"] + ec + [
            "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr", "-subj", "/CN=localhost",
        ])
        try """
        subjectAltName=DNS:localhost,IP:127.0.0.1
        basicConstraints=CA:FALSE
        keyUsage=critical,digitalSignature
        extendedKeyUsage=serverAuth
        """.write(toFile: "\(d)/server.ext", atomically: true, encoding: .utf8)
        try ChildProcess.run([
            "openssl", "x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.pem", "-CAkey", "\(d)/ca.key",
            "-CAcreateserial", "-out", "\(d)/server.pem", "-days", "2", "-extfile", "\(d)/server.ext",
        ])
        return "\(d)/ca.pem"
    }
}
