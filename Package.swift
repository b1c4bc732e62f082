// swift-tools-version:6.1
//
// Linux only: the server is built on epoll.
// Layering (arrows point down; nothing lower imports anything higher):
//   siwa-server (executable, CLI)
//     -> SiwaApp (configuration, the route table and its handlers, pages, commands, metrics, logging, assembly)
//          -> CSiwaAppFiles (its OpenAPI document, pages' stylesheets, script and words, embedded by C)
//       -> Accounts (sign-in, passwords, deletion and revocation, notifications, re-validation, team transfer,
//          webhook and mail delivery, signing keys, housekeeping; no HTTPServer) -> Store, AppleClient, JOSE, Passwords, SMTP
//       -> HTTPServer (HTTP/1.1)                      -> Sockets (epoll loop, descriptors), CZlib
//       -> Store (the schema, records and transactions, the outboxes) -> SQLite -> CSQLite, JSON
//                                                     -> PostgreSQL -> CLibPQ (libpq: several instances)
//       -> JOSE (JWS, Apple's token rules, client secret) -> JSON, OpenSSLCrypto -> COpenSSL
//       -> AppleClient (JWKS cache, Apple's REST endpoints) -> HTTPClient (HTTPS) -> TLS
//   AppleSimulator (apple-sim: Apple's endpoints offline) -> HTTPServer, JOSE, HTTPClient, TLS
//   MailTemplates (the messages in English and Korean, embedded template files; the Language of pages and mail): imports nothing
//   SMTP (mail: smtp_url, MIME messages, sessions over STARTTLS or TLS; for the mail outbox) -> TLS
//   TLS (OpenSSL's TLS on sockets, connecting with deadlines, throwaway CAs) -> OpenSSLCrypto -> COpenSSL
// Beneath them, for whichever layers need them (one copy of each small helper):
//   Passwords (scrypt password hashes on their own threads, the password rules) -> OpenSSLCrypto, SystemThread,
//     CCommonPasswords (the common-password list, embedded by C)
//   WireFormat (base64, hex, form-urlencoding, percent-decoding, chunk-size lines, trimming, token kinds): imports nothing
//   SystemThread (named POSIX threads, a mutex with its condition variable) -> CSystem
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "siwa-server",
    products: [
        .executable(name: "siwa-server", targets: ["siwa-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // C libraries from the system (libssl-dev, libsqlite3-dev, libpq-dev, zlib1g-dev). Each
        // module map's header also holds the few static inline shims for macros Swift cannot import.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // Debian keeps libpq-fe.h in /usr/include/postgresql; pkg-config says so.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSystem"),
        .target(name: "SystemThread", dependencies: ["CSystem"], swiftSettings: strict),
        .target(name: "WireFormat", swiftSettings: strict),

        // The descriptors under the HTTP server: an epoll loop that is also a task executor, the
        // listening and connected sockets, the monotonic clock. Nothing here speaks HTTP.
        .target(name: "Sockets", dependencies: ["CSystem", "SystemThread"], swiftSettings: strict),
        .target(
            name: "HTTPServer",
            dependencies: ["CZlib", "CSystem", "Sockets", "WireFormat", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(name: "SQLRow", swiftSettings: strict),
        .target(name: "SQLite", dependencies: ["CSQLite", "SQLRow", "SystemThread"], swiftSettings: strict),
        .target(name: "PostgreSQL", dependencies: ["CLibPQ", "CSystem", "SQLRow", "SystemThread"], swiftSettings: strict),
        .target(name: "OpenSSLCrypto", dependencies: ["COpenSSL"], swiftSettings: strict),
        // Password hashes (scrypt in PHC strings) on a bounded pool of threads, and the rules a
        // new password must meet, with the common-password list shipped inside the binary.
        .target(name: "Passwords", dependencies: ["CCommonPasswords", "COpenSSL", "OpenSSLCrypto", "SystemThread", "WireFormat"], swiftSettings: strict),
        // The common-password list as a text file that C23's #embed compiles into the binary:
        // SwiftPM's .embedInCode would write it out as a Swift array literal, seconds to compile.
        .target(name: "CCommonPasswords", exclude: ["common-passwords.txt"]),
        // SiwaApp's OpenAPI document, pages' stylesheets, script and words, compiled in by C23's
        // #embed from where they live under Sources/SiwaApp/HTTP (.embedInCode took 30 s to compile).
        .target(name: "CSiwaAppFiles"),
        .target(name: "JSON", swiftSettings: strict),
        .target(name: "JOSE", dependencies: ["JSON", "OpenSSLCrypto", "WireFormat"], swiftSettings: strict),
        .target(name: "TLS", dependencies: ["COpenSSL", "CSystem", "OpenSSLCrypto", "SystemThread"], swiftSettings: strict),
        .target(name: "HTTPClient", dependencies: ["TLS", "CZlib", "CSystem", "COpenSSL", "SystemThread", "WireFormat"], swiftSettings: strict),
        // The SMTP client: parses smtp_url, builds MIME messages, sends them over one kept
        // connection; no Foundation. Above it, later, the mail outbox in SiwaApp.
        .target(name: "SMTP", dependencies: ["TLS", "COpenSSL", "SystemThread", "WireFormat"], swiftSettings: strict),
        // The messages' words (en, ko) as template files embedded in the binary.
        .target(name: "MailTemplates", resources: [.embedInCode("Templates")], swiftSettings: strict),
        .target(name: "AppleClient", dependencies: ["HTTPClient", "JOSE", "JSON", "OpenSSLCrypto", "WireFormat"], swiftSettings: strict),
        .target(
            name: "AppleSimulator",
            dependencies: ["HTTPServer", "HTTPClient", "JOSE", "JSON", "OpenSSLCrypto", "TLS", "WireFormat", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(name: "Store", dependencies: ["SQLRow", "SQLite", "PostgreSQL", "JSON", "OpenSSLCrypto", "WireFormat"], swiftSettings: strict),
        // The application's core: sign-in, passwords, deletion and revocation, notifications,
        // re-validation, transfer, webhook and mail delivery, signing keys, housekeeping. It does
        // not speak HTTP: SiwaApp's route table calls it, and one error mapping answers its errors.
        .target(
            name: "Accounts",
            dependencies: [
                "Store", "OpenSSLCrypto", "JOSE", "JSON", "HTTPClient", "AppleClient", "Passwords", "SystemThread", "WireFormat", "SMTP",
                "MailTemplates", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SiwaApp",
            dependencies: [
                "Accounts", "HTTPServer", "Store", "OpenSSLCrypto", "JOSE", "JSON", "HTTPClient", "AppleClient", "Passwords", "SystemThread", "WireFormat",
                "SMTP", "MailTemplates", "CSiwaAppFiles", .product(name: "Logging", package: "swift-log"),
            ],
            // The pages' words in English and Korean (HTTP/Pages/Strings/pages.<language>.txt), the
            // pages' stylesheets and script (HTTP/Pages/Static/) and the OpenAPI document
            // (HTTP/API/OpenAPI/openapi.json): compiled in by CSiwaAppFiles.
            exclude: ["HTTP/Pages/Strings", "HTTP/Pages/Static", "HTTP/API/OpenAPI"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "siwa-server",
            dependencies: [
                "SiwaApp", "Accounts", "Store", "JOSE", "OpenSSLCrypto", "AppleSimulator", "WireFormat",
                .product(name: "Logging", package: "swift-log"), .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // Measurement tool for Scripts/bench; not shipped.
        .executableTarget(name: "siwa-bench", dependencies: ["COpenSSL", "JOSE", "JSON", "OpenSSLCrypto", "AppleSimulator", "HTTPServer", "Passwords", "SystemThread", "WireFormat"], swiftSettings: strict),

        // Shared by the test targets: child processes without Foundation's Process, a pool of
        // RSA keys so simulators do not each spend CPU generating their own, a throwaway
        // PostgreSQL cluster (Scripts/postgres-cluster) with a fresh database per test, and the
        // ways a test waits without timing: `eventually` (bounded polling) and `Gate`.
        .target(
            name: "TestSupport",
            dependencies: ["CSystem", "SystemThread", "OpenSSLCrypto", "AppleSimulator", "PostgreSQL"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),

        // The application test harness: `withApp` runs a test body against the assembled
        // application (its own database on either engine, an Apple ID simulator, a held clock if
        // asked) and stops all of it at scope exit; `send` reaches the responder in process or
        // over the socket, and rows are seeded and read through the application's Store.
        .target(
            name: "AppTestSupport",
            dependencies: [
                "SiwaApp", "Store", "SQLite", "HTTPServer", "JSON", "AppleSimulator", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/AppTestSupport",
            swiftSettings: strict
        ),

        .testTarget(name: "WireFormatTests", dependencies: ["WireFormat"], swiftSettings: strict),
        .testTarget(name: "SystemThreadTests", dependencies: ["SystemThread", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "PostgreSQLTests", dependencies: ["PostgreSQL", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "OpenSSLCryptoTests", dependencies: ["OpenSSLCrypto", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "PasswordsTests", dependencies: ["Passwords", "OpenSSLCrypto", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "JSONTests", dependencies: ["JSON"], swiftSettings: strict),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "COpenSSL", "OpenSSLCrypto", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient", "TLS", "HTTPServer", "OpenSSLCrypto", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "MailTemplatesTests", dependencies: ["MailTemplates"], swiftSettings: strict),
        .testTarget(name: "SMTPTests", dependencies: ["SMTP", "TLS", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "AppleClientTests", dependencies: ["AppleClient", "AppleSimulator", "HTTPClient", "JOSE", "OpenSSLCrypto", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "AppleSimulatorTests", dependencies: ["AppleSimulator", "HTTPClient", "HTTPServer", "JOSE", "JSON", "OpenSSLCrypto", "SMTP", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(name: "StoreTests", dependencies: ["Store", "SQLite", "PostgreSQL", "OpenSSLCrypto", "TestSupport", "WireFormat"], swiftSettings: strict),
        .testTarget(
            name: "SiwaAppTests",
            dependencies: [
                "SiwaApp", "Accounts", "AppleSimulator", "HTTPServer", "Store", "SQLRow", "SQLite", "OpenSSLCrypto", "JSON", "JOSE", "TestSupport", "AppTestSupport",
                "WireFormat", "SMTP", "MailTemplates", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SiwaServerTests",
            dependencies: ["siwa-server", "SiwaApp", "OpenSSLCrypto", "AppleSimulator", "HTTPServer", "JOSE", "JSON", "SQLite", "TestSupport", "WireFormat"],
            swiftSettings: strict
        ),
    ]
)
