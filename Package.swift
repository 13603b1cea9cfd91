// swift-tools-version:6.0
import PackageDescription

/// ImageKit: image loading for server-side Swift on Linux.
///
/// Linux only (Debian 12 tested): the Swift code imports Glibc, and the C core links
/// Debian's codec libraries (libjpeg-turbo, libpng, libwebp, libimagequant), Little CMS 2, zlib,
/// LZ4 and libcurl, so no Apple platform is declared. libavif, libheif and libjxl are not
/// linked: the C core opens them with dlopen on first use (Sources/CImageCore/codecs), so a
/// process that never sees AVIF, HEIF or JPEG XL never maps them; their Debian packages are
/// still required.
///
/// `ImageKit` is the only product a service needs; it has no Swift package
/// dependencies. `ImageKitServer` adds the glue to the Swift server ecosystem (swift-log,
/// swift-metrics, swift-distributed-tracing, swift-service-lifecycle); only it depends on
/// those packages.
let package = Package(
    name: "ImageKit",
    products: [
        .library(name: "ImageKit", targets: ["ImageKit"]),
        .library(name: "ImageKitServer", targets: ["ImageKitServer"]),
        .library(name: "ImageKitRedis", targets: ["ImageKitRedis"]),
        .executable(name: "imagekit", targets: ["ImageKitCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // ImageKitServer's (and its tests' in-memory backends); the versions it was tested with.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "CImageCore",
            exclude: ["decode/heif/README.md"],
            cSettings: [
                .define("NDEBUG", .when(configuration: .release)),
                .define("_GNU_SOURCE"),
            ],
            linkerSettings: [
                .linkedLibrary("turbojpeg"),
                .linkedLibrary("jpeg"),
                .linkedLibrary("png16"),
                .linkedLibrary("deflate"),
                .linkedLibrary("z"),
                .linkedLibrary("webp"),
                .linkedLibrary("webpdemux"),
                .linkedLibrary("webpmux"),
                .linkedLibrary("lz4"),
                .linkedLibrary("curl"),
                .linkedLibrary("lcms2"),
                .linkedLibrary("m"),
                .linkedLibrary("pthread"),
            ]
        ),
        .target(
            name: "ImageKit",
            dependencies: ["CImageCore"]
        ),
        // Logs, metrics, spans and a lifecycle service for ImageKit, in the server ecosystem's terms.
        .target(
            name: "ImageKitServer",
            dependencies: [
                "ImageKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A shared cache tier on Redis nodes (consistent hashing, pools, circuit breakers).
        .target(
            name: "ImageKitRedis",
            dependencies: ["ImageKit", "CImageCore"]
        ),
        .executableTarget(
            name: "ImageKitCLI",
            dependencies: [
                "ImageKit",
                "ImageKitRedis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/ImageKitCLI"
        ),
        // Bare codec-library calls (the anchors the benchmarks compare against, and
        // independent reference encoders/decoders for the tests). Not part of any product.
        .target(
            name: "CAnchors",
            path: "Tests/CAnchors",
            cSettings: [.define("NDEBUG", .when(configuration: .release))],
            linkerSettings: [
                .linkedLibrary("turbojpeg"), .linkedLibrary("jpeg"), .linkedLibrary("png16"),
                .linkedLibrary("webp"), .linkedLibrary("webpdemux"), .linkedLibrary("webpmux"),
                .linkedLibrary("gif"), .linkedLibrary("lcms2"), .linkedLibrary("heif"), .linkedLibrary("jxl"),
                .linkedLibrary("avif"), .linkedLibrary("imagequant"),
            ]
        ),
        // Deterministic test pictures, and helpers over ImageKit's types, shared by the tests
        // and the benchmarks.
        .target(
            name: "ImageKitTestSupport",
            dependencies: ["ImageKit"],
            path: "Tests/TestSupport"
        ),
        // A child process for the cache tests (crash-safety writer, allocation probe) and
        // the malloc counter only it links. Not part of any product.
        .target(name: "CAllocCounter", path: "Tests/CAllocCounter"),
        .executableTarget(
            name: "ImageKitTestHelper",
            dependencies: ["ImageKit", "CImageCore", "CAllocCounter"],
            path: "Tests/ImageKitTestHelper"
        ),
        // Real HTTP servers on 127.0.0.1 (nginx, and a Python server for the misbehaving
        // cases) that the downloader tests and benchmarks start and stop. Not part of any product.
        .target(
            name: "TestServers",
            path: "Tests/TestServers",
            exclude: ["http_test_server.py", "hostile_redis_node.py"]
        ),
        .testTarget(
            name: "ImageKitTests",
            dependencies: ["ImageKit", "CImageCore", "CAnchors", "ImageKitTestSupport", "TestServers"],
            path: "Tests/ImageKitTests"
        ),
        .testTarget(
            name: "ImageKitRedisTests",
            dependencies: ["ImageKitRedis", "ImageKit", "ImageKitTestSupport", "TestServers"],
            path: "Tests/ImageKitRedisTests"
        ),
        .testTarget(
            name: "ImageKitServerTests",
            dependencies: [
                "ImageKitServer", "ImageKit", "ImageKitTestSupport", "TestServers",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ImageKitServerTests"
        ),
        .testTarget(
            name: "ImageKitBenchmarks",
            dependencies: ["ImageKit", "ImageKitServer", "ImageKitRedis", "CImageCore", "CAnchors", "ImageKitTestSupport", "TestServers",
                           .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks",
            // A separate package (AsyncHTTPClient comparison), built only by `make bench-peers`.
            exclude: ["Peers", "README.md"]  // README.md: the figures a full `make bench` writes
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make docs` sets IMAGEKIT_DOCS=1 for swift-docc-plugin's generate-documentation command. Only
// then is the plugin a dependency, so packages that use ImageKit never resolve or fetch it.
if Context.environment["IMAGEKIT_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}
