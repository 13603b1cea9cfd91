import Foundation
import XCTest

/// The README's compiled examples: each stands in a test file between two marker comments
/// and must appear in README.md exactly, as a Swift code block.
enum ReadmeExample {
    /// Fails unless README.md shows, as a Swift code block, the code of `source` (a test
    /// file's `#filePath`) between `// <marker>-BEGIN` and `// <marker>-END`.
    static func assertShown(_ marker: String, from source: String, file: StaticString = #filePath,
                            line: UInt = #line) throws {
        let sourceURL = URL(fileURLWithPath: source)
        let root = sourceURL.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: sourceURL, encoding: .utf8)
        let example = text.components(separatedBy: "// \(marker)-BEGIN\n")[1]
            .components(separatedBy: "// \(marker)-END")[0]
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("```swift\n" + example + "```"),
                      "README.md's example differs from \(sourceURL.lastPathComponent)", file: file, line: line)
    }
}
