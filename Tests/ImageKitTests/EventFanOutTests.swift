@testable import ImageKit
import XCTest

/// The one way the manager and the downloader hand events to their observers.
final class EventFanOutTests: XCTestCase {
    func testEveryObserverGetsEachEventInOrderBeforeEmitReturns() {
        let seen = Collector<String>()
        let fanOut = EventFanOut<Int>([
            { seen.append("first \($0)") },
            { seen.append("second \($0)") },
        ])
        XCTAssertFalse(fanOut.isEmpty)
        fanOut.emit(1)
        fanOut.emit(2)
        XCTAssertEqual(seen.all, ["first 1", "second 1", "first 2", "second 2"])
    }

    func testWithoutObserversNoEventIsBuilt() {
        let built = Collector<Int>()
        func event() -> Int {
            built.append(1)
            return 1
        }
        let fanOut = EventFanOut<Int>([])
        XCTAssertTrue(fanOut.isEmpty)
        fanOut.emit(event())
        XCTAssertEqual(built.all.count, 0)
        EventFanOut<Int>([{ _ in }]).emit(event())
        XCTAssertEqual(built.all.count, 1)
    }

    /// A manager's per-load observers go through the same call: after the manager's observers,
    /// each event built once, nothing built when neither has any.
    func testLoadObserversGetEachEventRightAfterTheManagersObservers() {
        let seen = Collector<String>()
        let built = Collector<Int>()
        func event(_ task: UInt64) -> ImageManagerEvent {
            built.append(1)
            return .cancelled(task: task, url: nil, duration: .zero)
        }
        @Sendable func name(_ e: ImageManagerEvent) -> String {
            if case .cancelled(let task, _, _) = e { "cancelled \(task)" } else { "other" }
        }
        let loadObservers: [any ImageLoadObserver] = [
            LoadObserver { seen.append("load A \(name($0))") },
            LoadObserver { seen.append("load B \(name($0))") },
        ]
        EventFanOut<ImageManagerEvent>([]).emit(event(1), to: [])
        XCTAssertEqual(built.all.count, 0)

        EventFanOut<ImageManagerEvent>([]).emit(event(2), to: loadObservers)
        XCTAssertEqual(seen.all, ["load A cancelled 2", "load B cancelled 2"])

        let fanOut = EventFanOut<ImageManagerEvent>([{ seen.append("manager \(name($0))") }])
        fanOut.emit(event(3), to: loadObservers)
        fanOut.emit(event(4))
        XCTAssertEqual(Array(seen.all.dropFirst(2)), ["manager cancelled 3", "load A cancelled 3", "load B cancelled 3",
                                                      "manager cancelled 4"])
        XCTAssertEqual(built.all.count, 3)
    }
}

private struct LoadObserver: ImageLoadObserver {
    let onEvent: @Sendable (ImageManagerEvent) -> Void
    func receive(_ event: ImageManagerEvent) { onEvent(event) }
    func loadEnded() {}
}
