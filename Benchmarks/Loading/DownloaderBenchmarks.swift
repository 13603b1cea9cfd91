import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// 500 files of 100 KB from nginx on 127.0.0.1, 6 and 32 in flight: files per
/// second and process CPU per file, ours against URLSession (FoundationNetworking,
/// itself on libcurl) in the same run. AsyncHTTPClient is measured by the
/// separate package in Benchmarks/Peers (`make bench-peers`).
final class DownloaderBenchmarks: LoopbackFilesBenchmark {
    func testDownload500Files6InFlight() throws { try compare(inFlight: 6) }

    func testDownload500Files32InFlight() throws { try compare(inFlight: 32) }

    private func compare(inFlight: Int) throws {
        let session = LoopbackFiles.urlSession(inFlight: inFlight)
        defer { session.invalidateAndCancel() }
        try LoopbackFiles.compare(self, urls: urls, inFlight: inFlight,
                                  peer: "URLSession", filesPerSecondTarget: 4, cpuTarget: nil) {
            try LoopbackFiles.fetchAll(session, $0)
        }
    }
}
