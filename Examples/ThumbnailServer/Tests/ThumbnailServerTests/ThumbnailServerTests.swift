import Foundation
import ImageKit
import XCTest

/// Runs the built `thumbnail-server` against a Python origin on 127.0.0.1 and talks HTTP to it.
final class ThumbnailServerTests: XCTestCase {
    private var processes: [Process] = []
    private var folder: URL!
    private var server: Process!
    private var serverPort = 0
    /// The bytes of the origin's `photos/cat.jpg`.
    private var jpegSize = 0
    private var originPort = 0

    /// The origin: Python's file server over a folder, plus `/redirect/HOST:PORT/PATH`, which
    /// answers 302 to `http://HOST:PORT/PATH`.
    private static let origin = """
        import functools, http.server, sys
        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/redirect/"):
                    self.send_response(302)
                    self.send_header("Location", "http://" + self.path[len("/redirect/"):])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    super().do_GET()
            def log_message(self, *args):
                pass
        handler = functools.partial(Handler, directory=sys.argv[2])
        http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
        """

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnail-server-\(UUID())")
        let images = folder.appendingPathComponent("origin/photos")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        // A 400x300 gradient, encoded by ImageKit.
        var pixels = [UInt8](repeating: 255, count: 400 * 300 * 4)
        for i in 0..<400 * 300 { pixels[i * 4] = UInt8(i % 400 * 255 / 399); pixels[i * 4 + 1] = UInt8(i / 400 * 255 / 299) }
        let jpeg = try ImageEncoder.encode(Image(width: 400, height: 300, premultipliedRGBA: pixels), as: .jpeg())
        try jpeg.write(to: images.appendingPathComponent("cat.jpg"))
        jpegSize = jpeg.count

        originPort = try freePort()
        try start("/usr/bin/python3",
                  ["-c", Self.origin, "\(originPort)", folder.appendingPathComponent("origin").path])
        try waitUntilListening(originPort)

        // The server's binary is built next to the test bundle.
        let binary = Bundle.main.bundleURL.appendingPathComponent("thumbnail-server").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            XCTFail("no \(binary)")
            throw POSIXError(.ENOENT)
        }
        serverPort = try freePort()
        server = try start(binary, ["--port", "\(serverPort)", "--origin", "http://127.0.0.1:\(originPort)",
                           "--cache", folder.appendingPathComponent("cache").path])
        try waitUntilListening(serverPort)
    }

    override func tearDown() {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    func testServesThumbnails() throws {
        let first = try get("/thumb/photos/cat.jpg?w=100")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.headers["x-cache"], "miss")
        XCTAssertEqual(first.headers["content-type"], "image/jpeg")
        XCTAssertEqual(first.headers["cache-control"], "public, max-age=31536000, immutable")
        XCTAssertEqual(first.headers["vary"], "Accept")  // no format: negotiated (JPEG without an Accept)
        let info = try ImageDecoder.info(first.body)
        XCTAssertEqual([info.format, info.width, info.height] as [AnyHashable], [ImageFormat.jpeg, 100, 75])

        let second = try get("/thumb/photos/cat.jpg?w=100")
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(second.headers["x-cache"], "memory")
        let etag = try XCTUnwrap(first.headers["etag"])
        XCTAssertEqual(second.headers["etag"], etag)
        XCTAssertEqual(second.body, first.body)

        let revalidated = try get("/thumb/photos/cat.jpg?w=100", headers: ["If-None-Match": etag])
        XCTAssertEqual(revalidated.status, 304)
        XCTAssertEqual(revalidated.body.count, 0)

        let webp = try get("/thumb/photos/cat.jpg?w=64&format=webp")
        XCTAssertEqual(webp.status, 200)
        XCTAssertEqual(webp.headers["content-type"], "image/webp")
        XCTAssertNil(webp.headers["vary"])
        XCTAssertEqual(try ImageDecoder.info(webp.body).width, 64)

        let negotiated = try get("/thumb/photos/cat.jpg?w=64", headers: ["Accept": "image/webp,*/*"])
        XCTAssertEqual(negotiated.headers["content-type"], "image/webp")
        XCTAssertEqual(negotiated.headers["vary"], "Accept")

        XCTAssertEqual(try get("/thumb/photos/missing.jpg?w=100").status, 404)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=0").status, 400)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=5000").status, 400)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg").status, 400)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=10&format=gif").status, 400)
        XCTAssertEqual(try get("/thumb/photos/%2E%2E/cat.jpg?w=10").status, 400)
    }

    /// ImageKit's metrics, scraped from `/metrics` in Prometheus's text format after some loads.
    func testMetricsCountTheLoads() throws {
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=100").headers["x-cache"], "miss")  // downloaded
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=100").headers["x-cache"], "memory")
        // The first load's disk writes (variant, then original bytes) finish after its answer:
        // wait for the disk store to be counted, which happens once both are written.
        let stored = Series(name: "imagekit_store_duration_seconds_count", labels: ["tier": "disk"])
        let deadline = Date().addingTimeInterval(15)
        while try Self.samples(String(decoding: get("/metrics").body, as: UTF8.self))[stored] ?? 0 < 1 {
            guard Date() < deadline else { return XCTFail("the first load's disk store never finished") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=64&format=webp").headers["x-cache"], "disk")  // the original bytes
        XCTAssertEqual(try get("/thumb/photos/missing.jpg?w=100").status, 404)

        let scrape = try get("/metrics")
        XCTAssertEqual(scrape.status, 200)
        XCTAssertEqual(scrape.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
        let metrics = Self.samples(String(decoding: scrape.body, as: UTF8.self))
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            metrics[Series(name: name, labels: labels)]
        }
        XCTAssertEqual(value("imagekit_loads_total", ["result": "success", "tier": "network"]), 1)
        XCTAssertEqual(value("imagekit_loads_total", ["result": "success", "tier": "memory"]), 1)
        XCTAssertEqual(value("imagekit_loads_total", ["result": "success", "tier": "disk"]), 1)
        XCTAssertEqual(value("imagekit_loads_total", ["result": "failure", "tier": "none"]), 1)
        XCTAssertEqual(value("imagekit_load_failures_total", ["error": "http_status"]), 1)
        XCTAssertEqual(value("imagekit_cache_queries_total", ["tier": "memory", "result": "hit"]), 1)
        XCTAssertEqual(value("imagekit_cache_queries_total", ["tier": "original", "result": "hit"]), 1)
        XCTAssertEqual(value("imagekit_downloads_total", ["result": "ok"]), 1)
        XCTAssertEqual(value("imagekit_downloads_total", ["result": "http_error"]), 1)
        XCTAssertEqual(value("imagekit_download_bytes_total").map { $0 >= Double(jpegSize) }, true)
        XCTAssertEqual(value("imagekit_decode_duration_seconds_count"), 2)
        XCTAssertEqual(value("imagekit_encode_duration_seconds_count", ["format": "jpeg"]), 1)
        XCTAssertEqual(value("imagekit_encode_duration_seconds_count", ["format": "webp"]), 1)
        XCTAssertEqual(value("imagekit_load_duration_seconds_count", ["result": "success", "tier": "memory"]), 1)
        // The gauges, as they were at the scrape.
        XCTAssertEqual(value("imagekit_cache_entries", ["tier": "memory"]), 2, "two variants")
        XCTAssertEqual(value("imagekit_loads_in_flight"), 0)
        XCTAssertEqual(value("imagekit_downloads_in_flight", ["state": "queued"]), 0)
        XCTAssertEqual(value("imagekit_blocklisted_urls"), 1)
    }

    func testTrustsItsOriginOnlyWhereverItRedirects() throws {
        // The origin is on 127.0.0.1, which the default policy refuses: the server trusts it.
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=20").status, 200)
        // The origin's redirect back to itself is followed.
        let home = try get("/thumb/redirect/127.0.0.1:\(originPort)/photos/cat.jpg?w=20")
        XCTAssertEqual(home.status, 200)
        XCTAssertEqual(try ImageDecoder.info(home.body).width, 20)
        // Anywhere else the origin sends the server (here another loopback address, and the
        // cloud metadata address) is under the default policy: refused, 403, nothing fetched.
        let elsewhere = try get("/thumb/redirect/127.0.0.2:\(originPort)/photos/cat.jpg?w=20")
        XCTAssertEqual(elsewhere.status, 403)
        XCTAssertEqual(String(decoding: elsewhere.body, as: UTF8.self),
                       "destination 127.0.0.2 is loopback, which the policy does not allow\n")
        let metadata = try get("/thumb/redirect/169.254.169.254/latest/meta-data/iam?w=20")
        XCTAssertEqual(metadata.status, 403)
        XCTAssertTrue(String(decoding: metadata.body, as: UTF8.self).contains("cloud metadata"))
    }

    func testRefusesAnOriginThatIsNoURL() throws {
        let binary = Bundle.main.bundleURL.appendingPathComponent("thumbnail-server").path
        let bad = try start(binary, ["--port", "\(try freePort())", "--origin", "images.internal",
                                     "--cache", folder.appendingPathComponent("cache-bad").path])
        bad.waitUntilExit()
        XCTAssertNotEqual(bad.terminationStatus, 0)
    }

    func testExitsCleanlyOnSIGTERM() throws {
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=32").status, 200)
        kill(server.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while server.isRunning, Date() < deadline { usleep(20_000) }
        XCTAssertFalse(server.isRunning, "still running 10 s after SIGTERM")
        guard !server.isRunning else { return }
        XCTAssertEqual(server.terminationReason, .exit)
        XCTAssertEqual(server.terminationStatus, 0)
    }

    // MARK: - Helpers

    /// One series of a scrape: a metric's name and its labels.
    private struct Series: Hashable {
        let name: String
        let labels: [String: String]
    }

    /// The samples of a Prometheus text-format scrape, by series.
    private static func samples(_ text: String) -> [Series: Double] {
        var samples: [Series: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                samples[Series(name: String(series), labels: [:])] = value
                continue
            }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)].split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            samples[Series(name: String(series[..<brace]), labels: labels)] = value
        }
        return samples
    }

    @discardableResult
    private func start(_ path: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.append(process)
        return process
    }

    /// A port nothing listens on now (the kernel's pick for port 0).
    private func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withSockaddr(&address) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        guard ok else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func waitUntilListening(_ port: Int) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let fd = try? connect(port) { close(fd); return }
            usleep(50_000)
        }
        XCTFail("nothing listens on port \(port)")
        throw POSIXError(.ECONNREFUSED)
    }

    private func connect(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(UInt16(port))
        guard withSockaddr(&address, { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }) == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func withSockaddr<R>(_ address: inout sockaddr_in, _ body: (UnsafeMutablePointer<sockaddr>) -> R) -> R {
        withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }

    /// One HTTP/1.1 GET on its own connection (`Connection: close`, so the body ends at EOF).
    private func get(_ target: String, headers: [String: String] = [:]) throws
        -> (status: Int, headers: [String: String], body: Data) {
        let fd = try connect(serverPort)
        defer { close(fd) }
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(serverPort)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let bytes = Array((request + "\r\n").utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw POSIXError(.EIO) }
        var response = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case let n = recv(fd, &chunk, chunk.count, 0), n != 0 {
            guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
            response.append(contentsOf: chunk[..<n])
        }
        let split = try XCTUnwrap(response.range(of: Data("\r\n\r\n".utf8)))
        let lines = String(decoding: response[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            fields[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields, Data(response[split.upperBound...]))
    }
}
