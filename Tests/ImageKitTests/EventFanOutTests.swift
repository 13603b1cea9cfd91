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
}
