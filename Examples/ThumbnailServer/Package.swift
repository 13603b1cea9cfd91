// swift-tools-version:6.0
import PackageDescription

/// An HTTP thumbnail service on ImageKit and Hummingbird: the example to copy.
/// Its own package, so that ImageKit itself depends on no web framework.
let package = Package(
    name: "ThumbnailServer",
    products: [
        .executable(name: "thumbnail-server", targets: ["ThumbnailServer"]),
    ],
    dependencies: [
        .package(name: "ImageKit", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Hummingbird's own; declared to name a custom header field (`HTTPField.Name`).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // `/metrics`: swift-metrics and its Prometheus backend (Hummingbird already depends on
        // swift-metrics and swift-log; declared to import them).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        // Hummingbird's own; declared to watch each connection with a channel handler.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // Hummingbird's own; declared to give graceful shutdown a deadline.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "ThumbnailServer",
            dependencies: [
                .product(name: "ImageKit", package: "ImageKit"),
                .product(name: "ImageKitServer", package: "ImageKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "ThumbnailServerTests",
            // Builds the server first; the tests run the binary as a child process.
            dependencies: ["ThumbnailServer", .product(name: "ImageKit", package: "ImageKit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
