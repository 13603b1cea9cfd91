import Foundation
import ImageKit
import TestServers
import XCTest

/// What a service relies on around its loads: shutdown, the HTTP status of a failure, the
/// blocklist's policy, and the bound on pipelines holding bytes.
final class ImageManagerServiceTests: ManagerTestCase {
    func testDrainingShutdownFinishesLoadsInFlightAndRefusesNewOnes() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("drain")
        let held = Task { try await m.image(for: f.script.url("/gate_png?key=\(k)")) }
        await DownloadTesting.waitUntil("the request reached the server") { (try? f.script.stats(k).count) == 1 }
        let shutdown = Task { await m.shutdown() }
        await DownloadTesting.waitUntil("new loads are refused") {
            if self.blockingError(m, f.nginx.url("/photo.jpg"))?.code == .shutDown { return true }
            return false
        }
        try f.script.open(k)
        let result = try await held.value
        XCTAssertEqual([result.image.width, result.image.height], [16, 12], "the load in flight finished")
        await shutdown.value
        XCTAssertTrue(m.statistics.isIdle)
        XCTAssertTrue(m.builtInDownloader.statistics.isIdle)
        guard await ManagerTesting.error(m, f.nginx.url("/photo.jpg"))?.code == .shutDown else { return XCTFail() }
        do {
            try await m.builtInCache.diskCache.storeData(Data([1]), forKey: "after")
            XCTFail("the disk tier took a write after it was shut down")
        } catch {
            guard error.code == .shutDown else { return XCTFail("\(error)") }
        }
    }

    func testCancellingShutdownCancelsLoadsInFlight() async throws {
        let f = try fixture
        let m = try makeManager()
        let k = unique("cancel")
        let held = Task { try await m.encodedImage(for: f.script.url("/gate_png?key=\(k)"), as: .fixed(.png())) }
        await DownloadTesting.waitUntil("the request reached the server") { (try? f.script.stats(k).count) == 1 }
        await m.shutdown(.cancel)
        do {
            _ = try await held.value
            XCTFail("the load in flight finished")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertTrue(m.statistics.isIdle)
        try f.script.open(k)
    }

    func testDownloaderShutdownDrains() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = unique("dl")
        let held = Task { try await d.download(DownloadRequest(url: f.script.url("/gate?key=\(k)&n=500"))) }
        await DownloadTesting.waitUntil("the request reached the server") { (try? f.script.stats(k).count) == 1 }
        let shutdown = Task { await d.shutdown() }
        try await Task.sleep(for: .milliseconds(50))
        do {
            _ = try await d.download(DownloadRequest(url: f.nginx.url("/photo.jpg")))
            XCTFail("a download started after shutdown")
        } catch {
            XCTAssertEqual(error, .cancelled)
        }
        try f.script.open(k)
        let body = try await held.value
        XCTAssertEqual(body.data.count, 500)
        await shutdown.value
        XCTAssertTrue(d.statistics.isIdle)
    }

    func testURLSpellingsThatLoad() async throws {
        let f = try fixture
        let m = try makeManager()
        let plain = f.nginx.url("/photo.jpg").absoluteString
        for spelling in [plain.replacingOccurrences(of: "http://", with: "HTTP://"),
                         plain.replacingOccurrences(of: "http://", with: "http://user:secret@"),
                         plain + "?v=2#top"] {
            let r = try await ManagerTesting.image(m, URL(string: spelling))
            XCTAssertEqual(r.image.width, 640, spelling)
        }
        await ManagerTesting.assertIdle(m)
    }

    func testSuggestedHTTPStatuses() async throws {
        let f = try fixture
        let m = try makeManager()
        let missing = f.nginx.url("/\(unique("missing")).jpg")
        let notFound = await ManagerTesting.error(m, missing)
        XCTAssertEqual(notFound?.suggestedHTTPStatus, 404)
        let blocked = await ManagerTesting.error(m, missing)
        guard let blocked, blocked.code == .blocklisted else { return XCTFail("\(String(describing: blocked))") }
        XCTAssertEqual(blocked.suggestedHTTPStatus, 404, "a blocklisted URL answers as its original failure")
        XCTAssertTrue(blocked.message.contains("404"), blocked.message)
        XCTAssertEqual(blocked.original?.code, .httpStatus)
        let notAnImage = await ManagerTesting.error(m, f.nginx.url("/note.txt"))
        XCTAssertEqual(notAnImage?.suggestedHTTPStatus, 422)
        let cold = await ManagerTesting.error(m, f.nginx.url("/photo.jpg"), options: .fromCacheOnly)
        XCTAssertEqual(cold?.suggestedHTTPStatus, 404)
        let table: [(ImageKitError, Int)] = [
            (.httpStatus(500, ""), 502), (.httpStatus(410, ""), 410), (.httpStatus(403, ""), 403),
            (.httpStatus(429, ""), 503), (.httpStatus(418, ""), 502), (.timedOut(""), 504),
            (.deadlineExceeded(""), 504), (.connectFailed(""), 502), (.responseTooLarge(""), 413),
            (.limitExceeded(""), 422), (.invalidURL(""), 400), (.overloaded(""), 503), (.shutDown(""), 503),
            (.cancelled, 499), (.encodeFailed(""), 500), (.vetoed(""), 403),
        ]
        for (error, status) in table { XCTAssertEqual(error.suggestedHTTPStatus, status, "\(error.code)") }
        await ManagerTesting.assertIdle(m)
    }

    func testBlocklistPolicyIsConfigurable() async throws {
        let f = try fixture
        let off = try makeManager { $0.failedURLTimeToLive = .zero }
        let missing = f.nginx.url("/\(unique("gone")).jpg")
        for _ in 0..<2 {
            guard await ManagerTesting.error(off, missing)?.httpStatus == 404 else { return XCTFail() }
        }
        XCTAssertEqual(off.statistics.blocklistedURLs, 0)
        let not404 = try makeManager { $0.failedURLStatusCodes = [410] }
        for _ in 0..<2 {
            guard await ManagerTesting.error(not404, missing)?.httpStatus == 404 else { return XCTFail() }
        }
        XCTAssertEqual(not404.statistics.blocklistedURLs, 0)
        await ManagerTesting.assertIdle(off)
        await ManagerTesting.assertIdle(not404)
    }

    func testPipelinesPastTheLimitWaitHoldingNothingOrAreShed() async throws {
        let f = try fixture
        let m = try makeManager {
            $0.maxActivePipelines = 1
            $0.maxWaitingPipelines = 1
        }
        let k = unique("limit")
        let first = Task { try await m.image(for: f.script.url("/gate_png?key=\(k)&w=5")) }
        // Its request reaching the server comes after the turn is taken, on the downloader's thread.
        await DownloadTesting.waitUntil("the first holds the turn and is downloading") {
            m.statistics.activePipelines == 1 && (try? f.script.stats(k).count) == 1
        }
        let second = Task { try await m.image(for: f.script.url("/gate_png?key=\(k)&w=6")) }
        await DownloadTesting.waitUntil("the second waits") { m.statistics.waitingPipelines == 1 }
        XCTAssertEqual(try f.script.stats(k).count, 1, "the waiting load has not started its download")
        let shed = await ManagerTesting.error(m, f.script.url("/gate_png?key=\(k)&w=7"))
        guard shed?.code == .overloaded else { return XCTFail("\(String(describing: shed))") }
        XCTAssertEqual(shed?.suggestedHTTPStatus, 503)
        XCTAssertFalse(m.isBlocklisted(f.script.url("/gate_png?key=\(k)&w=7")), "overload is not the URL's fault")
        try f.script.open(k)
        let a = try await first.value, b = try await second.value
        XCTAssertEqual([a.image.width, b.image.width], [5, 6])
        XCTAssertNotNil(b.metrics.queueWait)
        await ManagerTesting.assertIdle(m)
        XCTAssertEqual([m.statistics.activePipelines, m.statistics.waitingPipelines], [0, 0])
    }

    func testCancellingAWaitingLoadGivesUpItsPlace() async throws {
        let f = try fixture
        let m = try makeManager { $0.maxActivePipelines = 1 }
        let k = unique("wait")
        let first = Task { try await m.image(for: f.script.url("/gate_png?key=\(k)&w=5")) }
        await DownloadTesting.waitUntil("the first holds the turn") { m.statistics.activePipelines == 1 }
        let waiting = Task { try await m.image(for: f.script.url("/gate_png?key=\(k)&w=6")) }
        await DownloadTesting.waitUntil("the second waits") { m.statistics.waitingPipelines == 1 }
        waiting.cancel()
        await DownloadTesting.waitUntil("it left the line") { m.statistics.waitingPipelines == 0 }
        try f.script.open(k)
        _ = try await first.value
        do {
            _ = try await waiting.value
            XCTFail("the cancelled load completed")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertEqual(try f.script.stats(k).count, 1, "the cancelled load never downloaded")
        await ManagerTesting.assertIdle(m)
    }

    /// The error of a load started with the completion-handler API, if it failed synchronously.
    private func blockingError(_ m: ImageManager, _ url: URL) -> ImageKitError? {
        let box = Collector<ImageKitError>()
        let task = m.loadImage(with: url) { if case .failure(let e) = $0 { box.append(e) } }
        let deadline = Date().addingTimeInterval(2)
        while box.all.isEmpty, !task.isFinished, Date() < deadline { usleep(1_000) }
        task.cancel()
        return box.all.first
    }
}
