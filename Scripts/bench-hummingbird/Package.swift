// swift-tools-version:6.1
//
// The reference server for Scripts/bench: Hummingbird 2 answering GET /healthz exactly as
// siwa-server does. A package of its own so that Hummingbird (and SwiftNIO) never become
// dependencies of the product; built into .build-hummingbird by the bench script.
import PackageDescription

let package = Package(
    name: "bench-hummingbird",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Default traits off: swift-configuration and full Foundation are not on the request path,
        // and leaving them out shortens the (cached) first build.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "healthz-hummingbird",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/HealthzHummingbird"
        ),
    ]
)
