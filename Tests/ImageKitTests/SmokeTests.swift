import XCTest
@testable import ImageKit

final class SmokeTests: XCTestCase {
    func testUnknown() {
        XCTAssertThrowsError(try ImageDecoder().decode([1, 2, 3]))
    }
}
