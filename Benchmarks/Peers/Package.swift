// swift-tools-version:6.0
import PackageDescription

/// The comparisons with the peers users would pick instead — downloads against
/// AsyncHTTPClient, thumbnails against libvips — kept out of the main package so
/// that neither the ImageKit product nor its tests depend on them (AsyncHTTPClient
/// is a long clean build; libvips a large Debian package). Run with `make bench-peers` from the repository root; figures go to
/// the same bench-results/results.jsonl as `make bench`.
///
/// The test servers and the benchmark's workload are the main package's own files,
/// linked in (Sources/TestServers, Tests/PeerBenchmarks/{BenchRecorder,LoopbackFiles}.swift).
///
/// `peer-thumbnail-server` is the peer of Examples/ThumbnailServer in `make bench-service`
/// (scripts/bench_service.py): the same HTTP thumbnail service built the usual way
/// without ImageKit, from Hummingbird, AsyncHTTPClient and libvips.
let package = Package(
    name: "ImageKitPeerBenchmarks",
    products: [
        .executable(name: "peer-thumbnail-server", targets: ["PeerThumbnailServer"]),
    ],
    dependencies: [
        .package(name: "ImageKit", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CVips", path: "Sources/CVips", pkgConfig: "vips"),
        .target(
            name: "TestServers",
            path: "Sources/TestServers",
            exclude: ["http_test_server.py"]
        ),
        .executableTarget(
            name: "PeerThumbnailServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                "CVips",
            ],
            path: "Sources/PeerThumbnailServer"
        ),
        .testTarget(
            name: "PeerBenchmarks",
            dependencies: [
                .product(name: "ImageKit", package: "ImageKit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "TestServers",
                "CVips",
            ],
            path: "Tests/PeerBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
