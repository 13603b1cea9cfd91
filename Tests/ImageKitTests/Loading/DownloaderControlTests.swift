import Foundation
import ImageKit
import TestServers
import XCTest

/// ``Downloader/cancelAllDownloads()`` and ``Downloader/isSuspended``, against real servers
/// on 127.0.0.1.
final class DownloaderControlTests: LoopbackTestCase {
    /// A key no other test (or earlier run of this one) has used on the Python server.
    private func key(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8))" }

    func testCancelAllDownloadsEndsRunningAndQueuedOnes() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader { $0.maxConcurrentDownloads = 1 }
        let running = key("cancel-all-running")
        let done = Collector<(String, ImageKitError?)>()
        for (name, url) in [("running", f.script.url("/gate?key=\(running)&n=1000")),
                            ("queued", f.nginx.url("/small.png"))] {
            d.startDownload(DownloadRequest(url: url)) { result in
                done.append((name, result.failure))
            }
        }
        await DownloadTesting.waitUntil("one runs, one waits") {
            d.statistics.runningTransfers == 1 && d.statistics.queuedTransfers == 1
        }
        d.cancelAllDownloads()
        await DownloadTesting.waitUntil("both end") { done.all.count == 2 }
        XCTAssertEqual(Set(done.all.map(\.0)), ["running", "queued"])
        XCTAssertTrue(done.all.allSatisfy { $0.1 == .cancelled }, "\(done.all)")
        await DownloadTesting.assertIdle(d)

        let later = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(Array(later.data), LoopbackFixture.files["small.png"], "later downloads run as usual")
        try f.script.open(running)
    }

    func testWhileSuspendedQueuedDownloadsWaitAndResumingStartsThem() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader()
        let k = key("suspend-running")
        let running = Task { try await d.download(DownloadRequest(url: f.script.url("/gate?key=\(k)&n=2000"))) }
        await DownloadTesting.waitUntil("the first download runs") { d.statistics.runningTransfers == 1 }

        d.isSuspended = true
        XCTAssertTrue(d.isSuspended)
        let queued = Task { try await d.download(DownloadRequest(url: f.nginx.url("/files/3.bin"))) }
        await DownloadTesting.waitUntil("the second download is queued") { d.statistics.queuedTransfers == 1 }
        try f.script.open(k)
        let first = try await running.value
        XCTAssertEqual(first.data.count, 2000, "a download in flight goes on while suspended")
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(d.statistics.queuedTransfers, 1, "still queued while suspended")
        XCTAssertEqual(d.statistics.runningTransfers, 0)

        d.isSuspended = false
        let second = try await queued.value
        XCTAssertEqual(Array(second.data), LoopbackFixture.files["files/3.bin"])
        await DownloadTesting.assertIdle(d)
    }
}
