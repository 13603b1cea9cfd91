import Foundation
import Glibc
import ImageKitTestSupport
import XCTest

/// Every hostile file of the shared corpus (bombs, corrupt and undefined
/// inputs), decoded by the CLI in a process whose address space is capped at
/// the decode's memory limit plus the runtime's own needs: a decode that
/// allocated past its limit, whatever the header claims, would fail to map
/// memory and report "out of memory" (or crash) instead of a clean refusal.
final class HostileInputTests: XCTestCase {
    private let memoryLimit = 64 << 20
    /// The Swift runtime, Foundation, the codec libraries and their own small
    /// working buffers (libjpeg's row buffers, zlib's window) need ~60 MiB here.
    private let runtimeAllowance = 96 << 20

    private var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }

    private var imagekit: String {
        BuiltProducts.imagekit.path
    }

    func testHostileFilesStayWithinTheMemoryLimit() throws {
        // ASan and TSan reserve terabytes of shadow address space: a cap is meaningless there.
        if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil {
            throw XCTSkip("address-space caps do not work under a sanitizer")
        }
        let manifestURL = corpus.appendingPathComponent("manifest.json")
        guard FileManager.default.fileExists(atPath: manifestURL.path) else {
            throw XCTSkip("the shared corpus is not beside the project (\(corpus.path))")
        }
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as! [String: Any]
        let entries = (manifest["entries"] as! [[String: Any]]).filter { ($0["expect"] as? String) != "ok" }
        XCTAssertGreaterThan(entries.count, 20)
        let kb = (memoryLimit + runtimeAllowance) / 1024
        for entry in entries {
            let path = corpus.appendingPathComponent(entry["path"] as! String).path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v \(kb) && exec \"$0\" decode --max-memory \(memoryLimit) \"$1\"",
                                 imagekit, path]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = Pipe()
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertTrue(process.terminationReason == .exit && [0, 1].contains(process.terminationStatus),
                          "\(path): ended by \(process.terminationReason) \(process.terminationStatus)")
            XCTAssertTrue(output.hasPrefix(path + "\t"), "\(path): \(output)")
            XCTAssertFalse(output.localizedCaseInsensitiveContains("out of memory")
                           || output.localizedCaseInsensitiveContains("cannot allocate"),
                           "\(path) allocated past its limit: \(output)")
        }
    }
}
