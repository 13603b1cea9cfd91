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
    /// answers 302 to `http://HOST:PORT/PATH`, `/slow/ANYTHING`, which answers 404 after 20 s, and
    /// `/private/PATH`, which answers `/PATH` to basic auth as `reader:s3cret` and 401 without it.
    private static let origin = """
        import base64, functools, http.server, sys, time
        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/private/"):
                    if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"reader:s3cret").decode():
                        self.send_error(401)
                        return
                    self.path = self.path[len("/private"):]
                    super().do_GET()
                elif self.path.startswith("/slow/"):
                    time.sleep(20)
                    self.send_error(404)
                elif self.path.startswith("/redirect/"):
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
        try jpeg.write(to: images.appendingPathComponent("cat..jpg"))
        jpegSize = jpeg.count

        originPort = try freePort()
        try start("/usr/bin/python3",
                  ["-c", Self.origin, "\(originPort)", folder.appendingPathComponent("origin").path])
        try waitUntilListening(originPort)

        try startServer()
    }

    /// The loads ImageKit runs at once by default (`maxActivePipelines`: 6 + 2 × cores).
    private static let loadsRunning = 6 + 2 * ProcessInfo.processInfo.activeProcessorCount

    /// Starts the server (stopping the one running, if any) with the test origin, a fresh
    /// cache folder and `arguments`; its output goes to `log` if given.
    private func startServer(_ arguments: [String] = [], origin: String? = nil, log: URL? = nil) throws {
        if let server, server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        // The server's binary is built next to the test bundle.
        let binary = Bundle.main.bundleURL.appendingPathComponent("thumbnail-server").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            XCTFail("no \(binary)")
            throw POSIXError(.ENOENT)
        }
        serverPort = try freePort()
        server = try start(binary, ["--port", "\(serverPort)", "--origin", origin ?? "http://127.0.0.1:\(originPort)",
                                    "--cache", folder.appendingPathComponent("cache-\(UUID())").path] + arguments,
                           log: log)
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

    func testFillsByGravity() throws {
        // cat.jpg is 400x300 with red rising left to right: a 50x50 fill keeps a 300x300 window.
        func red(_ query: String) throws -> (size: [Int], red: UInt8) {
            let answer = try get("/thumb/photos/cat.jpg?\(query)&format=png")
            XCTAssertEqual(answer.status, 200, query)
            let image = try ImageDecoder().decode(answer.body)
            return ([image.width, image.height], image.packedPixels()[(25 * image.width + 25) * 4])
        }
        let east = try red("w=50&gravity=east"), west = try red("w=50&gravity=west")
        let centre = try red("w=50&h=50")
        XCTAssertEqual([east.size, west.size, centre.size], [[50, 50], [50, 50], [50, 50]])
        XCTAssertGreaterThan(Int(east.red), Int(centre.red) + 30, "east keeps the right of the picture")
        XCTAssertLessThan(Int(west.red), Int(centre.red) - 30, "west keeps its left")
        let focused = try red("w=50&gravity=focus(1,0.5)")
        XCTAssertEqual(Int(focused.red), Int(east.red), accuracy: 2, "a focal point at the right edge is east")
        XCTAssertEqual(try red("w=80&h=40&gravity=smart").size, [80, 40])
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=50&gravity=up").status, 400)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=50&gravity=focus(2,0)").status, 400)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=50&h=0").status, 400)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=50&h=abc").status, 400)
    }

    func testAnswersHEADLikeGET() throws {
        let get = try get("/thumb/photos/cat.jpg?w=100")
        XCTAssertEqual(get.status, 200)
        let head = try self.get("/thumb/photos/cat.jpg?w=100", method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-length"], "\(get.body.count)")
        XCTAssertEqual(head.headers["content-type"], "image/jpeg")
        XCTAssertEqual(head.headers["etag"], get.headers["etag"])
        XCTAssertEqual(head.body.count, 0)
        XCTAssertEqual(try self.get("/thumb/photos/missing.jpg?w=100", method: "HEAD").status, 404)
    }

    /// Only a path segment that is exactly `..` (plain, percent-encoded, between plain or
    /// encoded separators) climbs out of the origin's folder; dots inside a name are a name.
    func testRefusesOnlyNamesThatClimbOut() throws {
        XCTAssertEqual(try get("/thumb/photos/cat..jpg?w=10").status, 200)
        XCTAssertEqual(try get("/thumb/photos/.../cat.jpg?w=10").status, 404)
        for climbing in ["photos/../photos/cat.jpg", "photos/%2e%2E/photos/cat.jpg", "photos/.%2e/photos/cat.jpg",
                         "photos/..%2fphotos/cat.jpg", "photos/..%5Cphotos/cat.jpg", "photos/%2e%2e",
                         "photos/..%2F..%2Fetc/passwd"] {
            XCTAssertEqual(try get("/thumb/\(climbing)?w=10").status, 400, climbing)
        }
    }

    /// `w` is capped (2048 by default, `--max-width`): the output's pixels and bytes with it.
    func testCapsTheWidth() throws {
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=2048").status, 200)
        let tooWide = try get("/thumb/photos/cat.jpg?w=2049")
        XCTAssertEqual(tooWide.status, 400)
        XCTAssertEqual(String(decoding: tooWide.body, as: UTF8.self), "w must be a width from 1 to 2048\n")
        try startServer(["--max-width", "64"])
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=64").status, 200)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=65").status, 400)
    }

    /// A client never sees the origin's URL, its hosts or the credentials in `--origin`, which
    /// reach the origin as basic auth and appear in no log line.
    func testAnswersAndLogsNoCredentialsOrInternalHosts() throws {
        let log = folder.appendingPathComponent("server.log")
        try startServer(origin: "http://reader:s3cret@127.0.0.1:\(originPort)/", log: log)
        let missing = try get("/thumb/photos/missing.jpg?w=100")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(String(decoding: missing.body, as: UTF8.self), "the origin answered HTTP 404 (http_status)\n")
        let again = try get("/thumb/photos/missing.jpg?w=100")  // now from the blocklist
        XCTAssertEqual(again.status, 404)
        XCTAssertEqual(String(decoding: again.body, as: UTF8.self),
                       "the image failed recently and is not fetched again yet: the origin answered HTTP 404 (blocklisted)\n")
        let refused = try get("/thumb/redirect/127.0.0.2:\(originPort)/photos/cat.jpg?w=20")
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(String(decoding: refused.body, as: UTF8.self),
                       "the image's address is not allowed (destination_refused)\n")
        XCTAssertEqual(try get("/thumb/private/photos/cat.jpg?w=20").status, 200, "the credentials reach the origin")

        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        let startup = try XCTUnwrap(lines.first { $0.contains("listening") })
        XCTAssertTrue(startup.contains("origin http://127.0.0.1:\(originPort)/"), String(startup))
        XCTAssertTrue(lines.contains { $0.contains("image load failed") }, "the failed loads are logged")
        for line in lines { XCTAssertFalse(line.contains("s3cret") || line.contains("reader"), String(line)) }
    }

    /// Clients that sent a request and left: their loads are cancelled, so the pipelines they
    /// held serve the next client at once (without it, each waits for the origin's 20 s).
    func testCancelsTheLoadsOfClientsThatLeft() throws {
        // More abandoned loads of a slow origin than ImageKit runs at once.
        let abandoned = try (0..<Self.loadsRunning + 6).map { try send("/thumb/slow/\($0).jpg?w=10") }
        usleep(500_000)
        for fd in abandoned { close(fd) }
        let started = Date()
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=10").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "waited for the abandoned loads")
    }

    /// Past 64 loads waiting for a turn (`--max-waiting-loads`), a load is refused at once: 503.
    func testBoundsTheLoadsWaiting() throws {
        // Some loads run, 64 wait, the other 26 are refused.
        let clients = try (0..<Self.loadsRunning + 64 + 26).map { try send("/thumb/slow/\($0).jpg?w=10") }
        defer { for fd in clients { close(fd) } }
        var refused = 0
        let deadline = Date().addingTimeInterval(8)
        for fd in clients {
            var timeout = timeval(tv_sec: 0, tv_usec: 1000)
            if Date() < deadline { timeout.tv_usec = 50_000 }
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let answer = try? receive(fd), answer.status == 503 else { continue }
            XCTAssertEqual(String(decoding: answer.body, as: UTF8.self),
                           "the service is busy; try again later (overloaded)\n")
            XCTAssertEqual(answer.headers["retry-after"], "1")
            refused += 1
        }
        XCTAssertGreaterThanOrEqual(refused, 20)
    }

    /// Clients that do not read a large answer hold about a slice of it each, not a copy.
    func testStreamsLargeAnswersToClientsThatDoNotRead() throws {
        try writeLargeImage()
        let target = "/thumb/photos/noise.png?w=2048&format=png"
        let whole = try get(target)
        XCTAssertEqual(whole.status, 200)
        XCTAssertGreaterThan(whole.body.count, 10 << 20)
        let before = try residentBytes(server.processIdentifier)
        let readers = try (0..<20).map { _ in try send(target, receiveBuffer: 4096) }
        defer { for fd in readers { close(fd) } }
        usleep(2_000_000)
        let grown = try residentBytes(server.processIdentifier) - before
        // Twenty copies before; now less than one in all.
        XCTAssertLessThan(grown, whole.body.count, "\(grown >> 20) MiB more for 20 clients of a \(whole.body.count >> 20) MiB answer")
        // The slices add up to the answer.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(readers[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        XCTAssertEqual(try receive(readers[0]).body, whole.body)
    }

    /// A client that leaves an answer unread for `--write-timeout` loses its connection.
    func testClosesConnectionsThatStopReading() throws {
        try writeLargeImage()
        try startServer(["--write-timeout", "1"])
        let target = "/thumb/photos/noise.png?w=2048&format=png"
        let whole = try get(target)
        XCTAssertEqual(whole.status, 200)
        let reader = try send(target, receiveBuffer: 4096)
        defer { close(reader) }
        usleep(4_000_000)
        let bytes = try receiveUntilClosed(reader)
        XCTAssertLessThan(bytes, whole.body.count / 2, "the connection stayed open for the whole answer")
    }

    /// Past `--max-connections`, a connection waits in the listen backlog until another closes.
    func testCapsTheConnections() throws {
        try startServer(["--max-connections", "2"])
        let first = try connect(serverPort), second = try connect(serverPort)
        defer { close(second) }
        usleep(200_000)
        let third = try send("/thumb/photos/cat.jpg?w=10")
        defer { close(third) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(third, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        XCTAssertThrowsError(try receive(third), "answered while two connections were open")
        close(first)
        timeout.tv_sec = 10
        setsockopt(third, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        XCTAssertEqual(try receive(third).status, 200)
    }

    /// `--idle-timeout` closes connections that send nothing, or send their headers too slowly.
    func testClosesIdleAndSlowConnections() throws {
        try startServer(["--idle-timeout", "1"])
        let silent = try connect(serverPort)
        defer { close(silent) }
        let slow = try connect(serverPort)
        defer { close(slow) }
        let partial = Array("GET /thumb/photos/cat.jpg?w=10 HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        XCTAssertEqual(Glibc.send(slow, partial, partial.count, 0), partial.count)
        let started = Date()
        XCTAssertEqual(try receiveUntilClosed(silent), 0)
        XCTAssertEqual(try receiveUntilClosed(slow), 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    /// A load still waiting at SIGTERM delays the exit by `--shutdown-timeout` at most.
    func testShutdownHasADeadline() throws {
        try startServer(["--shutdown-timeout", "1"])
        let waiting = try send("/thumb/slow/1.jpg?w=10")  // the origin answers after 20 s
        defer { close(waiting) }
        usleep(500_000)
        let started = Date()
        kill(server.processIdentifier, SIGTERM)
        while server.isRunning, Date().timeIntervalSince(started) < 15 { usleep(20_000) }
        XCTAssertFalse(server.isRunning)
        XCTAssertLessThan(Date().timeIntervalSince(started), 6)
    }

    /// `/metrics` is not on the public port; `--metrics-port` serves it on one of its own.
    func testServesMetricsOnlyOnTheirOwnPort() throws {
        XCTAssertEqual(try get("/metrics").status, 404)
        let metricsPort = try freePort()
        try startServer(["--metrics-port", "\(metricsPort)"])
        try waitUntilListening(metricsPort)
        XCTAssertEqual(try get("/metrics").status, 404)
        XCTAssertEqual(try get("/metrics", port: metricsPort).status, 200)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=10", port: metricsPort).status, 404)
    }

    /// ImageKit's metrics, scraped from `/metrics` in Prometheus's text format after some loads.
    func testMetricsCountTheLoads() throws {
        let metricsPort = try freePort()
        try startServer(["--metrics-port", "\(metricsPort)"])
        try waitUntilListening(metricsPort)
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=100").headers["x-cache"], "miss")  // downloaded
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=100").headers["x-cache"], "memory")
        // The first load's disk writes (variant, then original bytes) finish after its answer:
        // wait for the disk store to be counted, which happens once both are written.
        let stored = Series(name: "imagekit_store_duration_seconds_count", labels: ["tier": "disk"])
        let deadline = Date().addingTimeInterval(15)
        while try Self.samples(String(decoding: get("/metrics", port: metricsPort).body, as: UTF8.self))[stored] ?? 0 < 1 {
            guard Date() < deadline else { return XCTFail("the first load's disk store never finished") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertEqual(try get("/thumb/photos/cat.jpg?w=64&format=webp").headers["x-cache"], "disk")  // the original bytes
        XCTAssertEqual(try get("/thumb/photos/missing.jpg?w=100").status, 404)

        let scrape = try get("/metrics", port: metricsPort)
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
                       "the image's address is not allowed (destination_refused)\n")
        // The origin's host on another port is not the origin: refused before connecting.
        let otherPort = try get("/thumb/redirect/127.0.0.1:\(try freePort())/photos/cat.jpg?w=20")
        XCTAssertEqual(otherPort.status, 403)
        let metadata = try get("/thumb/redirect/169.254.169.254/latest/meta-data/iam?w=20")
        XCTAssertEqual(metadata.status, 403)
        XCTAssertFalse(String(decoding: metadata.body, as: UTF8.self).contains("169.254"))
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
    private func start(_ path: String, _ arguments: [String], log: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let log {
            guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw POSIXError(.EIO) }
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        processes.append(process)
        return process
    }

    /// Writes the origin's `photos/noise.png`: 2048×2048 pixels of noise, a PNG of about 16 MB
    /// whose 2048 px variant is about as large.
    private func writeLargeImage() throws {
        let side = 2048
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in 0..<side * side {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            pixels[i * 4] = UInt8(truncatingIfNeeded: state >> 56)
            pixels[i * 4 + 1] = UInt8(truncatingIfNeeded: state >> 48)
            pixels[i * 4 + 2] = UInt8(truncatingIfNeeded: state >> 40)
        }
        let png = try ImageEncoder.encode(Image(width: side, height: side, premultipliedRGBA: pixels), as: .png())
        try png.write(to: folder.appendingPathComponent("origin/photos/noise.png"))
    }

    /// The resident memory of process `pid`, in bytes.
    private func residentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try XCTUnwrap(Int(line.split(separator: " ")[1])) * 1024
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

    private func connect(_ port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
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

    /// One HTTP/1.1 request on its own connection (`Connection: close`, so the body ends at EOF).
    private func get(_ target: String, headers: [String: String] = [:], method: String = "GET", port: Int? = nil) throws
        -> (status: Int, headers: [String: String], body: Data) {
        let fd = try send(target, headers: headers, method: method, port: port)
        defer { close(fd) }
        return try receive(fd)
    }

    /// Sends one HTTP/1.1 request (`Connection: close`) on a new connection and returns it
    /// unread; `receiveBuffer` shrinks the socket's receive buffer, for a client that does not read.
    private func send(_ target: String, headers: [String: String] = [:], method: String = "GET", port: Int? = nil,
                      receiveBuffer: Int32? = nil) throws -> Int32 {
        let port = port ?? serverPort
        let fd = try connect(port, receiveBuffer: receiveBuffer)
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let bytes = Array((request + "\r\n").utf8)
        guard Glibc.send(fd, bytes, bytes.count, 0) == bytes.count else {
            close(fd)
            throw POSIXError(.EIO)
        }
        return fd
    }

    /// Reads the answer on `fd` up to EOF and parses it.
    private func receive(_ fd: Int32) throws -> (status: Int, headers: [String: String], body: Data) {
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

    /// Reads `fd` until the server closes it (EOF or reset) and returns the bytes read; throws
    /// when nothing ends it within the socket's receive timeout.
    private func receiveUntilClosed(_ fd: Int32) throws -> Int {
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n > 0 { total += n; continue }
            if n == 0 || errno == ECONNRESET { return total }
            throw POSIXError(.ETIMEDOUT)
        }
    }
}
