import Foundation
import ImageKit
import TestServers
import XCTest

/// The origin the ImageKitServer tests load from: nginx for files, the Python server for gated
/// answers.
final class Origin: Sendable {
    let nginx: NginxServer
    let script: ScriptServer
    /// `/photo.png`: a 40x30 PNG.
    let photo: [UInt8]

    /// An opaque PNG of the given size.
    static func png(width: Int, height: Int) throws -> [UInt8] {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for i in 0..<width * height { pixels[i * 4] = UInt8(i % 251) }
        let image = try Image(width: width, height: height, premultipliedRGBA: pixels)
        return Array(try ImageEncoder.encode(image, as: .png()))
    }

    init() throws {
        photo = try Self.png(width: 40, height: 30)
        nginx = try NginxServer(files: ["photo.png": photo, "other.png": try Self.png(width: 8, height: 6),
                                        "broken.png": Array("not an image\n".utf8)])
        do {
            script = try ScriptServer()
        } catch {
            nginx.stop()
            throw error
        }
    }

    func stop() {
        nginx.stop()
        script.stop()
    }
}

/// Base of the ImageKitServer test classes: the origin (started on first use, stopped after
/// the class) and managers over fresh caches.
class ServerTestCase: XCTestCase {
    static let servers = SharedServer(start: { try Origin() }, stop: { $0.stop() })

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    var origin: Origin { get throws { try Self.servers.get() } }

    /// A unique name, for gate keys.
    func unique(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8))" }

    /// An empty cache in a temporary folder removed after the test.
    func makeCache(memory: MemoryCacheConfiguration = MemoryCacheConfiguration()) throws -> ImageCache {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-server-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return try ImageCache(namespace: "test", directory: dir, memory: memory)
    }

    /// The test servers listen on 127.0.0.1: the tests' downloaders opt in to loopback.
    static let loopback = DestinationPolicy(allowsLoopback: true)

    /// A manager over a fresh cache and a new downloader (allowed to reach loopback), both
    /// configurable.
    func makeManager(cache: ImageCache? = nil, _ configure: (inout ImageManagerConfiguration) -> Void = { _ in },
                     downloader: (inout DownloaderConfiguration) -> Void = { _ in }) throws -> ImageManager {
        var c = ImageManagerConfiguration()
        configure(&c)
        var d = DownloaderConfiguration()
        d.destinationPolicy = Self.loopback
        downloader(&d)
        return ImageManager(cache: try cache ?? makeCache(), downloader: try Downloader(configuration: d),
                            configuration: c)
    }

    /// Waits (up to 10 s) until `condition` holds.
    func waitUntil(_ what: String, file: StaticString = #filePath, line: UInt = #line,
                   _ condition: () throws -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if (try? condition()) == true { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("timed out waiting until \(what)", file: file, line: line)
    }

    /// Waits until the manager and its downloader are idle, and the handlers already on their
    /// callback queues ran.
    func settle(_ m: ImageManager, file: StaticString = #filePath, line: UInt = #line) async {
        await waitUntil("the manager is idle", file: file, line: line) {
            m.statistics.isIdle && m.builtInDownloader.statistics.isIdle
        }
        for queue in [m.configuration.callbackQueue, m.builtInDownloader.configuration.callbackQueue] {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in queue.async { c.resume() } }
        }
    }

    /// The error a load expected to fail throws.
    func loadError(_ m: ImageManager, _ url: URL, file: StaticString = #filePath, line: UInt = #line) async
        -> ImageKitError? {
        do {
            _ = try await m.image(for: url)
            XCTFail("the load of \(url) succeeded", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }
}
