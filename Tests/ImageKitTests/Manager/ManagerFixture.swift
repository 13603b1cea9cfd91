import Foundation
import ImageKit
import ImageKitTestSupport
import TestServers
import XCTest

/// nginx (HTTP, and HTTPS under a CA of its own) serving the manager tests' images, and the
/// Python server for gated and held answers.
final class ManagerFixture: Sendable {
    private let servers: LoopbackFixture

    var nginx: NginxServer { servers.nginx }
    var script: ScriptServer { servers.script }

    /// A 640x480 photo-like JPEG.
    static let photo: [UInt8] = makeJPEG(SyntheticPhoto.rgba(width: 640, height: 480), width: 640, height: 480)
    /// A 1600x1200 JPEG (7.3 MB decoded).
    static let large: [UInt8] = makeJPEG(Pixels.pattern(width: 1600, height: 1200), width: 1600, height: 1200)
    /// A three-frame 8x4 GIF.
    static let animation: [UInt8] = {
        let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
        let frames = (0..<3).map { i in
            GIFWriter.Frame(width: 8, height: 4, indices: [UInt8](repeating: UInt8(i), count: 32), delayCentiseconds: 10)
        }
        return GIFWriter(width: 8, height: 4, globalPalette: palette, frames: frames, loopCount: 0).encode()
    }()

    /// Small distinct PNGs, `tiles/0.png` … `tiles/49.png`.
    static func tile(_ i: Int) -> [UInt8] {
        png(width: 24 + i % 5, height: 16 + i % 3, seed: i)
    }

    static func png(width: Int, height: Int, seed: Int = 0) -> [UInt8] {
        PNGWriter(width: width, height: height, colorType: .rgba, bitDepth: 8,
                  samples: Pixels.pattern(width: width, height: height, seed: seed).map(UInt16.init)).encode()
    }

    init() throws {
        var files: [String: [UInt8]] = [
            "photo.jpg": Self.photo, "large.jpg": Self.large, "anim.gif": Self.animation,
            "note.txt": Array("not an image\n".utf8),
        ]
        for i in 0..<50 { files["tiles/\(i).png"] = Self.tile(i) }
        // /same/ANY.jpg: large.jpg under as many URLs (cache keys) as a test wants.
        servers = try LoopbackFixture(files: files, locations: "location /same/ { rewrite ^ /large.jpg break; }")
    }

    func stop() {
        servers.stop()
    }

    /// The nginx access-log lines of GET requests for `path` so far.
    func requests(_ path: String) -> [String] {
        nginx.accessLog().filter { $0.contains("\"GET \(path) ") }
    }

    /// The access-log lines for `path` once there are at least `count` (nginx logs a request
    /// after answering it, so a line may trail the response).
    func requests(_ path: String, atLeast count: Int, file: StaticString = #filePath,
                  line: UInt = #line) async -> [String] {
        await DownloadTesting.waitUntil("\(count) requests for \(path)", file: file, line: line) {
            requests(path).count >= count
        }
        return requests(path)
    }

    /// A copy of `bytes` under a path of its own, so a test can count its requests alone.
    func copy(_ bytes: [UInt8], named name: String) throws -> (url: URL, path: String) {
        let path = "/copies/\(UUID().uuidString.prefix(8))-\(name)"
        try write(path, bytes)
        return (nginx.url(path), path)
    }

    /// Writes (or replaces) `path` under nginx's root.
    func write(_ path: String, _ bytes: [UInt8]) throws {
        let file = nginx.directory.appendingPathComponent("www").appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
    }
}

/// Base of the manager test classes: the servers (started on first use, stopped after the
/// class) and fresh caches in temporary folders.
class ManagerTestCase: XCTestCase {
    static let servers = SharedServer(start: { try ManagerFixture() }, stop: { $0.stop() })

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    var fixture: ManagerFixture { get throws { try Self.servers.get() } }

    /// A unique name, for server keys and file names.
    func unique(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8))" }

    /// An empty cache in a temporary folder removed after the test.
    func makeCache() throws -> ImageCache {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-manager-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return try ImageCache(namespace: "test", directory: dir)
    }

    /// A manager over a fresh cache and a new downloader (allowed to reach loopback), both configurable.
    func makeManager(cache: ImageCache? = nil, _ configure: (inout ImageManagerConfiguration) -> Void = { _ in },
                     downloader: (inout DownloaderConfiguration) -> Void = { _ in }) throws -> ImageManager {
        var c = ImageManagerConfiguration()
        configure(&c)
        var d = DownloaderConfiguration()
        d.destinationPolicy = DownloadTesting.loopback
        downloader(&d)
        return ImageManager(cache: try cache ?? makeCache(), downloader: try Downloader(configuration: d),
                            configuration: c)
    }
}

/// Helpers shared by the manager tests.
enum ManagerTesting {
    /// The outcome of one async load.
    static func result(_ m: ImageManager, _ url: URL?, options: ImageOptions = [],
                       context: ImageContext? = nil) async -> Result<ImageResult, ImageKitError> {
        do {
            return .success(try await m.image(for: url, options: options, context: context))
        } catch {
            return .failure(error)
        }
    }

    /// The image of a load expected to succeed.
    static func image(_ m: ImageManager, _ url: URL?, options: ImageOptions = [], context: ImageContext? = nil,
                      file: StaticString = #filePath, line: UInt = #line) async throws -> ImageResult {
        switch await result(m, url, options: options, context: context) {
        case .success(let r): return r
        case .failure(let e):
            XCTFail("load of \(url?.absoluteString ?? "nil") failed: \(e)", file: file, line: line)
            throw e
        }
    }

    /// The error of a load expected to fail.
    static func error(_ m: ImageManager, _ url: URL?, options: ImageOptions = [], context: ImageContext? = nil,
                      file: StaticString = #filePath, line: UInt = #line) async -> ImageKitError? {
        switch await result(m, url, options: options, context: context) {
        case .success(let r):
            XCTFail("expected a failure, got an image from \(r.source)", file: file, line: line)
            return nil
        case .failure(let e):
            return e
        }
    }

    /// Starts a load with the completion-handler API; its completions are collected.
    static func start(_ m: ImageManager, _ url: URL?, options: ImageOptions = [], context: ImageContext? = nil,
                      progress: (@Sendable (DownloadProgress) -> Void)? = nil)
        -> (task: ImageTask, completions: Collector<Result<ImageResult, ImageKitError>>) {
        let completions = Collector<Result<ImageResult, ImageKitError>>()
        let task = m.loadImage(with: url, options: options, context: context, progress: progress) {
            completions.append($0)
        }
        return (task, completions)
    }

    /// Waits until the manager and its downloader have nothing in flight and left nothing behind.
    static func assertIdle(_ m: ImageManager, file: StaticString = #filePath, line: UInt = #line) async {
        await DownloadTesting.waitUntil("the manager is idle", file: file, line: line) {
            m.statistics.isIdle && m.builtInDownloader.statistics.isIdle
        }
        XCTAssertTrue(m.statistics.isIdle, "not idle: \(m.statistics)", file: file, line: line)
        XCTAssertFalse(m.isRunning, file: file, line: line)
        XCTAssertTrue(m.builtInDownloader.statistics.isIdle, "downloader not idle: \(m.builtInDownloader.statistics)",
                      file: file, line: line)
    }

    /// Lets the callback queue run everything queued so far.
    static func drain(_ queue: DispatchQueue) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in queue.async { c.resume() } }
    }
}

/// Records a manager's events; an optional hook sees each one first (to cancel from inside a stage).
final class EventRecorder: ImageManagerObserver, @unchecked Sendable {
    // @unchecked Sendable: `hook` is only read and written with `lock` held.
    private let lock = NSLock()
    private var hook: (@Sendable (ImageManagerEvent) -> Void)?
    let events = Collector<ImageManagerEvent>()

    func onEvent(_ body: @escaping @Sendable (ImageManagerEvent) -> Void) {
        lock.lock()
        hook = body
        lock.unlock()
    }

    func receive(_ event: ImageManagerEvent) {
        lock.lock()
        let hook = self.hook
        lock.unlock()
        hook?(event)
        events.append(event)
    }

    /// Short names of the events so far, in order (`"query memory miss"`, `"download"`, …).
    var names: [String] { events.all.map(Self.name) }

    static func name(_ e: ImageManagerEvent) -> String {
        switch e {
        case .cacheQuery(_, _, let tier, let hit, _): "query \(tier == .memory ? "memory" : "disk") \(hit ? "hit" : "miss")"
        case .originalDataQuery(_, _, let hit, _): "query data \(hit ? "hit" : "miss")"
        case .downloadStarted: "download"
        case .downloadFinished(_, let response, _): "response \(response.statusCode)"
        case .downloadFailed(_, let error, _): "download failed \(error.code.rawValue)"
        case .decodeStarted: "decode"
        case .decoded(_, _, let size, _): "decoded \(size)"
        case .decodeFailed(_, _, let error, _): "decode failed \(error.code.rawValue)"
        case .transformed(_, _, let key, _, let error): "transformed \(key)\(error == nil ? "" : " failed")"
        case .encoded(_, _, let format, _, _, let error): "encoded \(format)\(error == nil ? "" : " failed")"
        case .stored(_, _, let tiers, _, let error): "stored \(tiers == .memory ? "memory" : "disk")\(error == nil ? "" : " failed")"
        case .completed(_, _, let type, _): "completed \(type)"
        case .failed(_, _, let error, _): "failed \(error.code.rawValue)"
        case .cancelled: "cancelled"
        }
    }
}
