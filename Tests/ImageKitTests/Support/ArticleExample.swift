import Foundation
import XCTest

/// The DocC articles' compiled examples: each stands in a test file between two marker comments
/// and must appear in its article (`Sources/ImageKit/ImageKit.docc/<name>.md`) exactly, as a
/// Swift code block.
enum ArticleExample {
    /// Fails unless the article `article` shows, as a Swift code block, the code of `source` (a
    /// test file's `#filePath`) between `// <marker>-BEGIN` and `// <marker>-END`.
    static func assertShown(_ marker: String, from source: String, inArticle article: String,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let sourceURL = URL(fileURLWithPath: source)
        let root = sourceURL.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: sourceURL, encoding: .utf8)
        let example = text.components(separatedBy: "// \(marker)-BEGIN\n")[1]
            .components(separatedBy: "// \(marker)-END")[0]
        let path = "Sources/ImageKit/ImageKit.docc/\(article).md"
        let shown = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        XCTAssertTrue(shown.contains("```swift\n" + example + "```"),
                      "\(path)'s example differs from \(sourceURL.lastPathComponent)", file: file, line: line)
    }
}
