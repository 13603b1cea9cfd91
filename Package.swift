// swift-tools-version:6.0
import PackageDescription

/// ImageKit: image loading for server-side Swift on Linux.
///
/// Linux only (Debian 12 tested): the Swift code imports Glibc, and the C core links
/// Debian's codec libraries (libjpeg-turbo, libpng, libwebp), LZ4 and libcurl, so no
/// Apple platform is declared.
///
/// `ImageKit` is the only product a service needs; it has no Swift package
/// dependencies.
let package = Package(
    name: "ImageKit",
    products: [
        .library(name: "ImageKit", targets: ["ImageKit"]),
        .executable(name: "imagekit", targets: ["ImageKitCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "CImageCore",
            cSettings: [
                .define("NDEBUG", .when(configuration: .release)),
                .define("_GNU_SOURCE"),
            ],
            linkerSettings: [
                .linkedLibrary("turbojpeg"),
                .linkedLibrary("jpeg"),
                .linkedLibrary("png16"),
                .linkedLibrary("webp"),
                .linkedLibrary("webpdemux"),
                .linkedLibrary("lz4"),
                .linkedLibrary("curl"),
                .linkedLibrary("m"),
                .linkedLibrary("pthread"),
            ]
        ),
        .target(
            name: "ImageKit",
            dependencies: ["CImageCore"]
        ),
        .executableTarget(
            name: "ImageKitCLI",
            dependencies: [
                "ImageKit",
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
                .linkedLibrary("gif"),
            ]
        ),
        // Deterministic test pictures shared by the tests and the benchmarks.
        .target(
            name: "ImageKitTestSupport",
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
            exclude: ["http_test_server.py"]
        ),
        .testTarget(
            name: "ImageKitTests",
            dependencies: ["ImageKit", "CImageCore", "CAnchors", "ImageKitCLI", "ImageKitTestSupport", "TestServers"],
            path: "Tests/ImageKitTests"
        ),
        .testTarget(
            name: "ImageKitBenchmarks",
            dependencies: ["ImageKit", "CImageCore", "CAnchors", "ImageKitTestSupport", "TestServers"],
            path: "Benchmarks",
            // A separate package (AsyncHTTPClient comparison), built only by `make bench-peers`.
            exclude: ["Peers"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make docs` sets IMAGEKIT_DOCS=1 for swift-docc-plugin's generate-documentation command. Only
// then is the plugin a dependency, so packages that use ImageKit never resolve or fetch it.
if Context.environment["IMAGEKIT_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}
