import Foundation
import ImageKit
import ImageKitTestSupport
import ImageKitServer
import InMemoryLogging
import Logging
import TestServers
import XCTest

/// ``ImageKitLogObserver`` against swift-log's in-memory handler: levels, messages and metadata.
final class ImageKitLogObserverTests: ServerTestCase {
    /// A logger at `level` into a fresh in-memory handler.
    private func logger(_ level: Logger.Level) -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "imagekit-test") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }

    private func entries(_ handler: InMemoryLogHandler, _ message: String) -> [InMemoryLogHandler.Entry] {
        handler.entries.filter { $0.message.description == message }
    }

    func testALoadLogsItsStagesAtTraceAndItsEndAtDebug() async throws {
        let o = try origin
        let (logger, handler) = logger(.trace)
        let m = try makeManager { $0.observers = [ImageKitLogObserver(logger: logger)] }
        let url = o.nginx.url("/photo.png")
        _ = try await m.image(for: url)
        await settle(m)
        let key = url.absoluteString
        XCTAssertEqual(handler.entries.map(\.message.description),
                       ["cache lookup", "cache lookup", "cache lookup", "download started", "download finished",
                        "decode started", "decoded", "stored", "image loaded", "stored"])
        XCTAssertEqual(Set(handler.entries.map(\.level)), [.trace, .debug])
        let lookups = entries(handler, "cache lookup")
        XCTAssertEqual(lookups.map { $0.metadata["imagekit.tier"] }, ["memory", "disk", "original"])
        XCTAssertEqual(lookups.map { $0.metadata["imagekit.hit"] }, ["false", "false", "false"])
        XCTAssertEqual(lookups[0].metadata["imagekit.cache_key"], "\(key)")
        let downloaded = try XCTUnwrap(entries(handler, "download finished").first)
        XCTAssertEqual(downloaded.level, .trace)
        XCTAssertEqual(downloaded.metadata["imagekit.status"], "200")
        XCTAssertEqual(downloaded.metadata["imagekit.bytes"], "\(o.photo.count)")
        XCTAssertEqual(entries(handler, "decoded").first?.metadata["imagekit.size"], "40x30")
        XCTAssertEqual(entries(handler, "stored").map { $0.metadata["imagekit.tier"] }, ["memory", "disk"])
        let loaded = try XCTUnwrap(entries(handler, "image loaded").first)
        XCTAssertEqual(loaded.level, .debug)
        XCTAssertEqual(loaded.metadata["imagekit.url"], "\(url.absoluteString)")
        XCTAssertEqual(loaded.metadata["imagekit.tier"], "network")
        XCTAssertNotNil(loaded.metadata["imagekit.task"])
        let milliseconds = try XCTUnwrap(Double(loaded.metadata["imagekit.duration_ms"]?.description ?? ""))
        XCTAssertGreaterThan(milliseconds, 0)
    }

    func testNoLogLineCarriesTheURLsCredentials() async throws {
        let o = try origin
        let (logger, handler) = logger(.trace)
        let m = try makeManager { $0.observers = [ImageKitLogObserver(logger: logger)] }
        let url = try XCTUnwrap(URL(string: "http://user:secret@127.0.0.1:\(o.nginx.port)/missing.png?token=t0ken"))
        _ = await loadError(m, url)
        _ = await loadError(m, url)  // blocklisted
        await settle(m)
        XCTAssertFalse(handler.entries.isEmpty)
        for entry in handler.entries {
            let line = "\(entry.message) \(entry.metadata)"
            XCTAssertFalse(line.contains("secret"), line)
            XCTAssertFalse(line.contains("user:"), line)
            XCTAssertFalse(line.contains("t0ken"), line)
        }
        let failed = try XCTUnwrap(entries(handler, "image load failed").first)
        XCTAssertEqual(failed.metadata["imagekit.url"], "http://127.0.0.1:\(o.nginx.port)/missing.png?token=REDACTED")
    }

    func testInfoStaysQuietForHitsAndSuccessfulLoads() async throws {
        let o = try origin
        let (logger, handler) = logger(.info)
        let m = try makeManager { $0.observers = [ImageKitLogObserver(logger: logger)] }
        let url = o.nginx.url("/photo.png")
        _ = try await m.image(for: url)
        for _ in 0..<10 { _ = try await m.image(for: url) }
        m.builtInCache.memoryCache.removeAll()
        _ = try await m.image(for: url)
        await settle(m)
        XCTAssertEqual(handler.entries.count, 0, "\(handler.entries)")
    }

    func testFailuresAreLoggedAtTheLevelTheirCauseDeserves() async throws {
        let o = try origin
        let (logger, handler) = logger(.debug)
        let m = try makeManager { $0.observers = [ImageKitLogObserver(logger: logger)] }
        let missing = o.nginx.url("/missing.png")
        _ = await loadError(m, missing)  // lasting: warning
        _ = await loadError(m, missing)  // blocklisted: debug
        _ = await loadError(m, o.nginx.url("/broken.png"))  // lasting: warning
        let closed = URL(string: "http://127.0.0.1:\(try Loopback.freePort())/a.png")!
        _ = await loadError(m, closed)  // passing: info
        await settle(m)
        let failures = entries(handler, "image load failed")
        XCTAssertEqual(failures.map(\.level), [.warning, .debug, .warning, .info])
        XCTAssertEqual(failures.map { $0.metadata["imagekit.error"] },
                       ["http_status", "blocklisted", "unknown_format", "connect_failed"])
        XCTAssertEqual(failures[0].metadata["imagekit.status"], "404")
        XCTAssertEqual(failures[0].metadata["imagekit.url"], "\(missing.absoluteString)")
        XCTAssertNotNil(failures[0].metadata["imagekit.error_message"])
        // The failed stages come first, at debug.
        XCTAssertEqual(entries(handler, "download failed").map(\.level), [.debug, .debug])
        XCTAssertEqual(entries(handler, "decode failed").map(\.level), [.debug])
    }

    /// Faults of the machine, which a local origin cannot provoke on demand, as events.
    func testLocalFaultsAreErrors() throws {
        let (logger, handler) = logger(.info)
        let observer = ImageKitLogObserver(logger: logger)
        let url = URL(string: "https://images.example/a.png")!
        observer.receive(.stored(url: url, key: "a", tiers: .disk, duration: .milliseconds(3),
                                 error: .noSpace("disk full")))
        observer.receive(.failed(task: 7, url: url, error: .io("cannot read /cache/a"), duration: .milliseconds(2)))
        observer.receive(.failed(task: 8, url: url, error: .overloaded("too many loads waiting"), duration: .zero))
        observer.receive(.failed(task: 9, url: url, error: .cancelled, duration: .zero))
        observer.receive(.stored(url: url, key: "a", tiers: .disk, duration: .milliseconds(3), error: nil))
        XCTAssertEqual(handler.entries.map(\.level), [.error, .error, .info])
        XCTAssertEqual(handler.entries.map(\.message.description), ["cache write failed", "image load failed",
                                                                    "image load failed"])
        XCTAssertEqual(handler.entries[0].metadata["imagekit.error"], "no_space")
        XCTAssertEqual(handler.entries[0].metadata["imagekit.error_message"], "disk full")
        XCTAssertEqual(handler.entries[0].metadata["imagekit.tier"], "disk")
        XCTAssertEqual(handler.entries[1].metadata["imagekit.task"], "7")
        XCTAssertEqual(handler.entries[1].metadata["imagekit.duration_ms"], "2.0")
    }
}
