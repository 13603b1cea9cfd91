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
    ],
    targets: [
        .executableTarget(
            name: "ThumbnailServer",
            dependencies: [
                .product(name: "ImageKit", package: "ImageKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
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
