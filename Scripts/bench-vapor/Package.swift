// swift-tools-version:6.1
//
// The comparison for Scripts/bench's sign-in figure (issue 13): Vapor 4 with vapor/jwt
// verifying an Apple identity token alone, no database, either with its keys loaded once at
// start or through vapor/jwt's Apple helper as it comes (VERIFY_MODE). A package of its own
// so that Vapor (and SwiftNIO) never become dependencies of the product; built into
// .build-vapor by the bench script.
import PackageDescription

let package = Package(
    name: "bench-vapor",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor", exact: "4.122.3"),
        .package(url: "https://github.com/vapor/jwt", exact: "5.2.0"),
    ],
    targets: [
        .executableTarget(
            name: "verify-vapor",
            dependencies: [
                .product(name: "Vapor", package: "vapor"),
                .product(name: "JWT", package: "jwt"),
            ],
            path: "Sources/VerifyVapor"
        ),
    ]
)
