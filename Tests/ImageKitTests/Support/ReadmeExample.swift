import Foundation
import XCTest

/// Checks that README.md shows, as a Swift code block, the code a test file holds between
/// `// README-NAME-BEGIN` and `// README-NAME-END`.
enum ReadmeExample {
    static func assertShown(_ name: String, from sourceFile: String, file: StaticString = #filePath,
                            line: UInt = #line) throws {
        let source = try String(contentsOf: URL(fileURLWithPath: sourceFile), encoding: .utf8)
        let example = source.components(separatedBy: "// README-\(name)-BEGIN\n")[1]
            .components(separatedBy: "// README-\(name)-END")[0]
        // Tests/ImageKitTests/…/File.swift: the package root is above Tests.
        var root = URL(fileURLWithPath: sourceFile).deletingLastPathComponent()
        while root.lastPathComponent != "Tests" { root.deleteLastPathComponent() }
        let readme = try String(contentsOf: root.deletingLastPathComponent().appendingPathComponent("README.md"),
                                encoding: .utf8)
        XCTAssertTrue(readme.contains("```swift\n" + example + "```"),
                      "README.md's \(name.lowercased()) example differs from \(URL(fileURLWithPath: sourceFile).lastPathComponent)",
                      file: file, line: line)
    }
}
