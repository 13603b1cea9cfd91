import Dispatch
import Foundation
import ImageKit
import TestServers
import XCTest

/// Downloader observers are delivered like the manager's: synchronously where each event
/// happens, so a transfer's events are all in by the time its caller resumes, and never
/// through the callback queue.
final class DownloaderObserverDeliveryTests: LoopbackTestCase {
    private final class Recorder: DownloaderObserver {
        /// (event, whether it ran on the callback queue), in order.
        let events = Collector<(String, Bool)>()
        let callbackQueueKey: DispatchSpecificKey<Int>

        init(callbackQueueKey: DispatchSpecificKey<Int>) {
            self.callbackQueueKey = callbackQueueKey
        }

        func receive(_ event: DownloadEvent) {
            let name = switch event {
            case .started: "started"
            case .response(_, let r): "response \(r.statusCode)"
            case .progress: "progress"
            case .finished: "finished"
            case .failed(_, let e, _): "failed \(e.code.rawValue)"
            }
            events.append((name, DispatchQueue.getSpecific(key: callbackQueueKey) != nil))
        }
    }

    func testATransfersEventsAreInWhenItsCallerResumes() async throws {
        let f = try fixture
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "test.downloader-callbacks")
        queue.setSpecific(key: key, value: 1)
        let recorder = Recorder(callbackQueueKey: key)
        let d = try DownloadTesting.downloader {
            $0.observers = [recorder]
            $0.callbackQueue = queue
        }
        _ = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(recorder.events.all.map(\.0).filter { $0 != "progress" }, ["started", "response 200", "finished"])
        _ = await DownloadTesting.result(d, DownloadRequest(url: f.nginx.url("/missing.png")))
        XCTAssertEqual(recorder.events.all.map(\.0).filter { $0 != "progress" }.suffix(3),
                       ["started", "response 404", "failed 20"])
        XCTAssertFalse(recorder.events.all.contains { $0.1 }, "no event goes through the callback queue")
        await DownloadTesting.assertIdle(d)
    }
}
