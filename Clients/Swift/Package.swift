// swift-tools-version:6.0
import PackageDescription

// SiwaClient: the app side of siwa-server. Its own package, so an app that depends on it never
// resolves the server's dependencies; it needs nothing but the standard library and Foundation.
let settings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "SiwaClient",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .visionOS(.v1)],
    products: [.library(name: "SiwaClient", targets: ["SiwaClient"])],
    targets: [
        .target(name: "SiwaClient", swiftSettings: settings),
        .testTarget(name: "SiwaClientTests", dependencies: ["SiwaClient"], swiftSettings: settings),
    ]
)
