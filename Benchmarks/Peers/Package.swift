// swift-tools-version:6.0
import PackageDescription

/// The download benchmark against AsyncHTTPClient, kept out of the main package so
/// that neither the ImageKit product nor its tests depend on AsyncHTTPClient (a long
/// clean build). Run with `make bench-peers` from the repository root; figures go to
/// the same bench-results/results.jsonl as `make bench`.
///
/// The test servers and the benchmark's workload are the main package's own files,
/// linked in (Sources/TestServers, Tests/PeerBenchmarks/{BenchRecorder,LoopbackFiles}.swift).
let package = Package(
    name: "ImageKitPeerBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ImageKit", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .target(
            name: "TestServers",
            path: "Sources/TestServers",
            exclude: ["http_test_server.py"]
        ),
        .testTarget(
            name: "PeerBenchmarks",
            dependencies: [
                .product(name: "ImageKit", package: "ImageKit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "TestServers",
            ],
            path: "Tests/PeerBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
