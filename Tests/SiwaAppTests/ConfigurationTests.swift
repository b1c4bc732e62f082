import Foundation
import Logging
import OpenSSLCrypto
import TestSupport
import Testing
@testable import SiwaApp

/// A file under the temporary directory with a unique name, removed by `remove()`.
private struct TemporaryFile {
    let path: String

    init(_ contents: String, suffix: String = ".json") throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("siwa-config-tests-\(UUID().uuidString)\(suffix)").path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Secret-looking text, so a test can check it never comes back in an error or the summary.
private let secretMarker = "SECRETSECRETSECRET"
private let fakePEM = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\(secretMarker)
    -----END PRIVATE KEY-----

    """

private func load(
    _ environment: [String: String] = [:], file: String? = nil, isTerminal: Bool = false
) throws(ConfigurationError) -> Configuration {
    try Configuration.load(file: file, environment: environment, isTerminal: isTerminal)
}

private func loadError(_ environment: [String: String], file: String? = nil) -> ConfigurationError? {
    do {
        _ = try load(environment, file: file)
        return nil
    } catch {
        return error
    }
}

private func loadJSON(_ json: String, environment: [String: String] = [:]) throws -> Configuration {
    let file = try TemporaryFile(json)
    defer { file.remove() }
    return try load(environment, file: file.path)
}

private func jsonError(_ json: String) throws -> ConfigurationError? {
    let file = try TemporaryFile(json)
    defer { file.remove() }
    return loadError([:], file: file.path)
}

/// One invalid setting: the environment that carries it and the key the error must name.
struct InvalidSetting: Sendable, CustomTestStringConvertible {
    let environment: [String: String]
    let key: String

    init(_ key: String, _ value: String, also extra: [String: String] = [:]) {
        self.key = key
        var environment = extra
        environment["SIWA_" + key.uppercased()] = value
        self.environment = environment
    }

    var testDescription: String { "\(key) = \(environment["SIWA_" + key.uppercased()] ?? "")" }
}

@Suite struct ConfigurationTests {
    // MARK: Defaults and sources

    @Test func defaultsWithNoFileAndNoEnvironment() throws {
        let config = try load()
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(config.publicURL == "http://localhost:8080")
        #expect(config.publicOrigin == "http://localhost:8080")
        #expect(config.database == "data/siwa.sqlite3")
        #expect(config.teamID == nil)
        #expect(config.keyID == nil)
        #expect(config.privateKeyPEM == nil)
        #expect(config.privateKeyFile == nil)
        #expect(config.clientIDs == [])
        #expect(config.webClientID == nil)
        #expect(config.redirectURI == "http://localhost:8080/auth/apple/callback")
        #expect(config.appleBaseURL == "https://appleid.apple.com")
        #expect(config.appleCAFile == nil)
        #expect(config.dataKey == nil)
        #expect(config.sessionTTL == .seconds(30 * 86_400))
        #expect(config.sessionIdleTTL == .seconds(7 * 86_400))
        #expect(config.requireNonce == true)
        #expect(config.refreshValidationInterval == .seconds(86_400))
        #expect(config.allowedReturnOrigins == ["http://localhost:8080"])
        #expect(config.trustedProxies.isEmpty)
        #expect(config.logFormat == .json)
        #expect(config.logLevel == .info)
        #expect(config.threads == min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 256))
        #expect(config.maxBodyBytes == 1_048_576)
        #expect(config.revocationBackoff == .seconds(5))
        #expect(config.revocationBackoffMax == .seconds(3_600))
        #expect(config.maxConnections == 10_000)
        #expect(config.rateLimit == RateLimit(requests: 600, perSeconds: 60))
        #expect(config == Configuration())
    }

    @Test func rateLimitTakesARateOrZeroForOff() throws {
        #expect(try load(["SIWA_RATE_LIMIT": "10/s"]).rateLimit == RateLimit(requests: 10, perSeconds: 1))
        #expect(try load(["SIWA_RATE_LIMIT": "0"]).rateLimit == nil)
        #expect(try load(["SIWA_MAX_CONNECTIONS": "64"]).maxConnections == 64)
    }

    @Test func integrationSettingsOfSection8() throws {
        let defaults = try load()
        #expect(defaults.webhookURL == nil && defaults.webhookSecret == nil && defaults.adminToken == nil)
        #expect(defaults.webhookBackoff == .seconds(5) && defaults.webhookRetention == .seconds(3 * 86_400))
        #expect(defaults.accessTokenTTL == .seconds(300) && defaults.accessTokenAudience == "http://localhost:8080")
        #expect(defaults.signingKeyRotation == .seconds(30 * 86_400) && defaults.allowedReturnSchemes.isEmpty)

        let secret = [UInt8](repeating: 9, count: 32)
        let config = try load([
            "SIWA_PUBLIC_URL": "https://id.example.com",
            "SIWA_WEBHOOK_URL": "http://127.0.0.1:9000/hooks", "SIWA_WEBHOOK_SECRET": "whsec_" + Data(secret).base64EncodedString(),
            "SIWA_WEBHOOK_BACKOFF": "2s", "SIWA_WEBHOOK_RETENTION": "1h",
            "SIWA_ADMIN_TOKEN": String(repeating: "a", count: 32),
            "SIWA_ACCESS_TOKEN_TTL": "1h", "SIWA_SIGNING_KEY_ROTATION": "7d",
            "SIWA_ALLOWED_RETURN_SCHEMES": "com.Example.App,my-app+v2.x,com.example.app",
        ])
        #expect(config.webhookURL == "http://127.0.0.1:9000/hooks" && config.webhookSecret == secret)
        #expect(config.webhookBackoff == .seconds(2) && config.webhookRetention == .seconds(3_600))
        #expect(config.adminToken?.count == 32)
        #expect(config.accessTokenTTL == .seconds(3_600) && config.accessTokenAudience == "https://id.example.com")
        #expect(config.signingKeyRotation == .seconds(7 * 86_400))
        #expect(config.allowedReturnSchemes == ["com.example.app", "my-app+v2.x"])
        #expect(try load(["SIWA_ACCESS_TOKEN_AUDIENCE": "api.example.com"]).accessTokenAudience == "api.example.com")

        // Secrets appear in the summary only as their length.
        let summary = Dictionary(uniqueKeysWithValues: config.summary().map { ($0.key, $0.value) })
        #expect(summary["webhook_secret"] == "set (32 bytes)" && summary["admin_token"] == "set (32 bytes)")
    }

    @Test func logFormatDefaultsToTextOnATerminal() throws {
        #expect(try load(isTerminal: true).logFormat == .text)
        #expect(try load(isTerminal: false).logFormat == .json)
        #expect(try load(["SIWA_LOG_FORMAT": "json"], isTerminal: true).logFormat == .json)
    }

    @Test func valuesFromFile() throws {
        let config = try loadJSON("""
            {
              "listen": "[::]:9090",
              "public_url": "https://auth.example.com/",
              "database": "/var/lib/siwa/siwa.sqlite3",
              "team_id": "ABCDE12345",
              "key_id": "KEY0000001",
              "client_ids": ["com.example.app", "com.example.web"],
              "session_ttl": "14d",
              "session_idle_ttl": 86400,
              "require_nonce": false,
              "refresh_validation_interval": 0,
              "trusted_proxies": ["10.0.0.0/8", "::1"],
              "log_format": "text",
              "log_level": "debug",
              "threads": 3,
              "max_body_bytes": "2048",
              "revocation_backoff": "10s",
              "revocation_backoff_max": "2h"
            }
            """)
        #expect(config.listen == ListenAddress(host: "::", port: 9090))
        #expect(config.publicURL == "https://auth.example.com")
        #expect(config.database == "/var/lib/siwa/siwa.sqlite3")
        #expect(config.teamID == "ABCDE12345")
        #expect(config.keyID == "KEY0000001")
        #expect(config.clientIDs == ["com.example.app", "com.example.web"])
        #expect(config.sessionTTL == .seconds(14 * 86_400))
        #expect(config.sessionIdleTTL == .seconds(86_400))
        #expect(config.requireNonce == false)
        #expect(config.refreshValidationInterval == .zero)
        #expect(config.trustedProxies.cidrs == ["10.0.0.0/8", "::1/128"])
        #expect(config.logFormat == .text)
        #expect(config.logLevel == .debug)
        #expect(config.threads == 3)
        #expect(config.maxBodyBytes == 2_048)
        #expect(config.revocationBackoff == .seconds(10))
        #expect(config.revocationBackoffMax == .seconds(7_200))
    }

    @Test func environmentBeatsFile() throws {
        let json = """
            {"listen": "127.0.0.1:1111", "session_ttl": "1d", "session_idle_ttl": "1h",
             "client_ids": "from.file", "log_level": "error", "require_nonce": true, "threads": 2}
            """
        let config = try loadJSON(json, environment: [
            "SIWA_LISTEN": "0.0.0.0:2222",
            "SIWA_SESSION_TTL": "2d",
            "SIWA_CLIENT_IDS": "from.env.one, from.env.two",
            "SIWA_LOG_LEVEL": "TRACE",
            "SIWA_REQUIRE_NONCE": "no",
            "SIWA_THREADS": "4",
            "SIWA_UNKNOWN_THING": "ignored",
        ])
        #expect(config.listen == ListenAddress(host: "0.0.0.0", port: 2222))
        #expect(config.sessionTTL == .seconds(2 * 86_400))
        #expect(config.sessionIdleTTL == .seconds(3_600))  // from the file, not overridden
        #expect(config.clientIDs == ["from.env.one", "from.env.two"])
        #expect(config.logLevel == .trace)
        #expect(config.requireNonce == false)
        #expect(config.threads == 4)
    }

    @Test func emptyEnvironmentValueMeansNotSet() throws {
        let config = try loadJSON(#"{"team_id": "ABCDE12345", "listen": "127.0.0.1:1"}"#,
                                  environment: ["SIWA_TEAM_ID": "", "SIWA_LISTEN": "  "])
        #expect(config.teamID == nil)
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 8080))
    }

    @Test func unknownJSONKeyRefused() throws {
        let error = try jsonError(#"{"sesion_ttl": "1d"}"#)
        #expect(error?.key == "sesion_ttl")
        #expect(error?.problem.contains("did you mean session_ttl?") == true)
        #expect(try jsonError(#"{"colour": "blue"}"#)?.key == "colour")
    }

    @Test func missingExplicitFileRefused() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("siwa-missing-\(UUID()).json").path
        let error = loadError([:], file: path)
        #expect(error?.key == "config")
        #expect(error?.description.hasPrefix("config: cannot read") == true)
    }

    @Test(arguments: ["{not json", "[1, 2]", "\"text\"", ""])
    func malformedFileRefused(json: String) throws {
        #expect(try jsonError(json)?.key == "config")
    }

    @Test func malformedFileErrorDoesNotEchoContent() throws {
        let error = try jsonError("{\"private_key\": \"\(secretMarker)")
        #expect(error?.key == "config")
        #expect(error?.description.contains(secretMarker) == false)
    }

    // MARK: Individual keys

    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", UInt16(8080)),
        ("0.0.0.0:80", "0.0.0.0", 80),
        ("[::]:8080", "::", 8080),
        ("[::1]:0", "::1", 0),
        ("localhost:8080", "127.0.0.1", 8080),
        ("127.0.0.1:65535", "127.0.0.1", 65535),
    ])
    func listenForms(text: String, host: String, port: UInt16) throws {
        #expect(try load(["SIWA_LISTEN": text]).listen == ListenAddress(host: host, port: port))
    }

    @Test func listenDescriptionBracketsIPv6() throws {
        #expect(ListenAddress(host: "::1", port: 80).description == "[::1]:80")
        #expect(ListenAddress(host: "127.0.0.1", port: 80).description == "127.0.0.1:80")
    }

    @Test func clientIDsAsStringAndAsArray() throws {
        let fromString = try loadJSON(#"{"client_ids": " com.a , com.b,com.a "}"#)
        let fromArray = try loadJSON(#"{"client_ids": ["com.a", " com.b", "com.a"]}"#)
        let fromEnvironment = try load(["SIWA_CLIENT_IDS": "com.a,com.b"])
        #expect(fromString.clientIDs == ["com.a", "com.b"])
        #expect(fromArray.clientIDs == ["com.a", "com.b"])
        #expect(fromEnvironment.clientIDs == ["com.a", "com.b"])
        #expect(fromString.webClientID == "com.a")
    }

    @Test func derivedDefaults() throws {
        let config = try load([
            "SIWA_PUBLIC_URL": "HTTPS://Auth.Example.com:443/",
            "SIWA_CLIENT_IDS": "com.example.web,com.example.app",
        ])
        #expect(config.publicURL == "HTTPS://Auth.Example.com:443")
        #expect(config.publicOrigin == "https://auth.example.com")
        #expect(config.webClientID == "com.example.web")
        #expect(config.redirectURI == "HTTPS://Auth.Example.com:443/auth/apple/callback")
        #expect(config.allowedReturnOrigins == ["https://auth.example.com"])

        let explicit = try load([
            "SIWA_PUBLIC_URL": "http://localhost:3000",
            "SIWA_CLIENT_IDS": "com.example.app,com.example.web",
            "SIWA_WEB_CLIENT_ID": "com.example.web",
            "SIWA_REDIRECT_URI": "https://tunnel.example.net/cb?x=1",
        ])
        #expect(explicit.publicOrigin == "http://localhost:3000")
        #expect(explicit.webClientID == "com.example.web")
        #expect(explicit.redirectURI == "https://tunnel.example.net/cb?x=1")
    }

    @Test func publicOriginFollowsPublicURL() {
        var config = Configuration()
        config.publicURL = "https://Auth.Example.com:8443/base"
        #expect(config.publicOrigin == "https://auth.example.com:8443")
    }

    @Test func settingsInCode() throws {
        let config = try Configuration(settings: [
            "listen": "[::1]:0", "public_url": "http://127.0.0.1:9999", "client_ids": "com.demo.web",
        ], isTerminal: true)
        #expect(config.listen == ListenAddress(host: "::1", port: 0))
        #expect(config.redirectURI == "http://127.0.0.1:9999/auth/apple/callback")
        #expect(config.webClientID == "com.demo.web")
        #expect(config.allowedReturnOrigins == ["http://127.0.0.1:9999"])
        #expect(config.logFormat == .text)
        #expect(throws: ConfigurationError(key: "colour", problem: "is not a known setting")) {
            try Configuration(settings: ["colour": "blue"], isTerminal: false)
        }
    }

    @Test func allowedReturnOriginsReplaceTheDefault() throws {
        let config = try load([
            "SIWA_ALLOWED_RETURN_ORIGINS": "https://app.example.com, HTTP://LOCALHOST:3000/, https://app.example.com:443",
        ])
        #expect(config.allowedReturnOrigins == ["https://app.example.com", "http://localhost:3000"])
    }

    @Test func corsOriginsAreOffByDefaultAndKeptInTheFormBrowsersSend() throws {
        #expect(try load([:]).corsOrigins.isEmpty)
        let config = try load([
            "SIWA_CORS_ORIGINS": "https://App.Example.com:443/, http://localhost:3000, http://127.0.0.1:5173, http://[::1]:8000, https://app.example.com",
        ])
        #expect(config.corsOrigins == ["https://app.example.com", "http://localhost:3000", "http://127.0.0.1:5173", "http://[::1]:8000"])
        #expect(config.summary().contains { $0.key == "cors_origins" && $0.value == config.corsOrigins.joined(separator: ",") })
    }

    @Test func corsOriginsRefuseTheWildcardAndPlainHTTPOffLoopback() {
        #expect(loadError(["SIWA_CORS_ORIGINS": "https://app.example.com,*"])?.description
            == #"cors_origins: "*" is not accepted: list each web app's origin (e.g. https://app.example.com)"#)
        #expect(loadError(["SIWA_CORS_ORIGINS": "http://app.example.com"])?.description
            == #"cors_origins: "http://app.example.com" must use https (http is allowed only for localhost, 127.0.0.0/8 and [::1])"#)
    }

    @Test(arguments: [
        "http://127.0.0.1:9000", "http://localhost:9000/", "http://[::1]:9000", "http://127.1.2.3",
        "https://example.com", "https://appleid.apple.com/",
    ])
    func appleBaseURLAccepted(url: String) throws {
        let config = try load(["SIWA_APPLE_BASE_URL": url])
        #expect(!config.appleBaseURL.hasSuffix("/"))
    }

    @Test(arguments: ["http://example.com", "http://127.example.com", "http://10.0.0.1", "http://[::2]"])
    func plainHTTPAppleBaseURLRefusedOffLoopback(url: String) {
        #expect(loadError(["SIWA_APPLE_BASE_URL": url])?.key == "apple_base_url")
    }

    @Test func privateKeyInline() throws {
        let config = try load(["SIWA_PRIVATE_KEY": fakePEM])
        #expect(config.privateKeyPEM == fakePEM.trimmedSetting)
        #expect(config.privateKeyFile == nil)
        // One-line form with literal \n, as environment files carry it.
        let oneLine = fakePEM.trimmedSetting.replacingOccurrences(of: "\n", with: "\\n")
        #expect(try load(["SIWA_PRIVATE_KEY": oneLine]).privateKeyPEM == fakePEM.trimmedSetting)
    }

    @Test func privateKeyFromFile() throws {
        let file = try TemporaryFile(fakePEM, suffix: ".p8")
        defer { file.remove() }
        let config = try load(["SIWA_PRIVATE_KEY_FILE": file.path])
        #expect(config.privateKeyPEM == fakePEM)
        #expect(config.privateKeyFile == file.path)
    }

    @Test func privateKeyAndPrivateKeyFileTogetherRefused() throws {
        let file = try TemporaryFile(fakePEM, suffix: ".p8")
        defer { file.remove() }
        let error = loadError(["SIWA_PRIVATE_KEY": fakePEM, "SIWA_PRIVATE_KEY_FILE": file.path])
        #expect(error?.key == "private_key_file")
        #expect(error?.description.contains(secretMarker) == false)
    }

    @Test func privateKeyFileWithoutPEMBlockRefusedWithoutEchoingIt() throws {
        let file = try TemporaryFile("garbage \(secretMarker)", suffix: ".p8")
        defer { file.remove() }
        let error = loadError(["SIWA_PRIVATE_KEY_FILE": file.path])
        #expect(error?.key == "private_key_file")
        #expect(error?.problem.contains("BEGIN PRIVATE KEY") == true)
        #expect(error?.description.contains(secretMarker) == false)
    }

    @Test func dataKeyOf32BytesInEveryBase64Form() throws {
        let bytes: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: 0xF8 + $0 * 37) }
        let standard = Data(bytes).base64EncodedString()
        #expect(standard.contains("+") || standard.contains("/"))
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        for text in [standard, urlSafe, String(standard.dropLast()), String(urlSafe.dropLast())] {
            #expect(try load(["SIWA_DATA_KEY": text]).dataKey == bytes, "\(text)")
        }
    }

    @Test func dataKeyOf31BytesRefused() {
        let text = Data(repeating: 7, count: 31).base64EncodedString()
        let error = loadError(["SIWA_DATA_KEY": text])
        #expect(error?.key == "data_key")
        #expect(error?.problem.contains("32 bytes") == true)
        #expect(error?.description.contains(text) == false)
    }

    @Test func appleCAFileMustExistAndHoldACertificate() throws {
        let file = try TemporaryFile("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", suffix: ".pem")
        defer { file.remove() }
        #expect(try load(["SIWA_APPLE_CA_FILE": file.path]).appleCAFile == file.path)
        let notPEM = try TemporaryFile("hello", suffix: ".pem")
        defer { notPEM.remove() }
        #expect(loadError(["SIWA_APPLE_CA_FILE": notPEM.path])?.key == "apple_ca_file")
    }

    @Test func durationsAcceptJSONNumbersAndZeroRefreshInterval() throws {
        let config = try loadJSON(#"{"revocation_backoff": 2, "refresh_validation_interval": "0"}"#)
        #expect(config.revocationBackoff == .seconds(2))
        #expect(config.refreshValidationInterval == .zero)
    }

    @Test func exampleMessagesAreExact() {
        #expect(loadError(["SIWA_TEAM_ID": "abc"])?.description == "team_id: must be 10 characters (A-Z, 0-9)")
        #expect(loadError(["SIWA_SESSION_TTL": "3x"])?.description
            == #"session_ttl: "3x" is not a duration (use 90s, 15m, 24h, 30d or seconds)"#)
    }

    static let invalidSettings: [InvalidSetting] = [
        .init("listen", "8080"),
        .init("listen", "example.com:80"),
        .init("listen", "127.0.0.1:70000"),
        .init("listen", "127.0.0.1:"),
        .init("listen", "::1:8080"),
        .init("listen", "[::1]"),
        .init("listen", "[127.0.0.1]:80"),
        .init("public_url", "ftp://example.com"),
        .init("public_url", "localhost:8080"),
        .init("public_url", "https://example.com/?a=1"),
        .init("public_url", "https://example.com/#top"),
        .init("public_url", "https://user:pw@example.com"),
        .init("public_url", "https:///path"),
        .init("public_url", "https://exa mple.com"),
        .init("database", "data\u{0}/siwa.sqlite3"),
        .init("team_id", "ABC"),
        .init("team_id", "abcde12345"),
        .init("team_id", "ABCDE123456"),
        .init("key_id", "KEY-000001"),
        .init("private_key", "not a key \(secretMarker)"),
        .init("private_key", "-----BEGIN EC PRIVATE KEY-----\n\(secretMarker)\n-----END EC PRIVATE KEY-----"),
        .init("private_key_file", "/nonexistent/siwa/AuthKey.p8"),
        .init("client_ids", "com.a,,com.b"),
        .init("client_ids", "com.a,"),
        .init("client_ids", "com.a, com b"),
        .init("web_client_id", "com.other", also: ["SIWA_CLIENT_IDS": "com.a"]),
        .init("redirect_uri", "/auth/apple/callback"),
        .init("redirect_uri", "https://example.com/cb#fragment"),
        .init("apple_base_url", "http://example.com"),
        .init("apple_base_url", "ftp://127.0.0.1"),
        .init("apple_base_url", "https://example.com/?q"),
        .init("apple_ca_file", "/nonexistent/siwa/ca.pem"),
        .init("data_key", "\(secretMarker)!!"),
        .init("data_key", Data(repeating: 1, count: 31).base64EncodedString()),
        .init("data_key", Data(repeating: 1, count: 33).base64EncodedString()),
        .init("session_ttl", "3x"),
        .init("session_ttl", "0"),
        .init("session_ttl", "-1d"),
        .init("session_idle_ttl", "0s"),
        .init("require_nonce", "maybe"),
        .init("refresh_validation_interval", "1y"),
        .init("refresh_validation_interval", "99999999999999999999999"),
        .init("allowed_return_origins", "https://app.example.com/path"),
        .init("allowed_return_origins", "app.example.com"),
        .init("allowed_return_origins", "https://a.example.com,,https://b.example.com"),
        .init("cors_origins", "*"),
        .init("cors_origins", "http://app.example.com"),
        .init("cors_origins", "http://10.0.0.5:3000"),
        .init("cors_origins", "https://app.example.com/app"),
        .init("cors_origins", "app.example.com"),
        .init("cors_origins", "https://app.example.com,,https://b.example.com"),
        .init("trusted_proxies", "10.0.0.0/33"),
        .init("trusted_proxies", "::1/129"),
        .init("trusted_proxies", "banana"),
        .init("trusted_proxies", "10.0.0.0/"),
        .init("log_format", "xml"),
        .init("log_level", "verbose"),
        .init("threads", "0"),
        .init("threads", "257"),
        .init("threads", "many"),
        .init("max_body_bytes", "0"),
        .init("max_body_bytes", "67108865"),
        .init("max_body_bytes", "1.5"),
        .init("revocation_backoff", "0s"),
        .init("revocation_backoff", "soon"),
        .init("revocation_backoff_max", "1s", also: ["SIWA_REVOCATION_BACKOFF": "5s"]),
        .init("revocation_backoff_max", "0"),
        .init("max_connections", "0"),
        .init("max_connections", "lots"),
        .init("rate_limit", "600"),
        .init("rate_limit", "600/d"),
        .init("rate_limit", "0/m"),
        .init("rate_limit", "-5/s"),
        .init("webhook_url", "http://hooks.example.com/siwa", also: ["SIWA_WEBHOOK_SECRET": "whsec_" + Data(repeating: 1, count: 32).base64EncodedString()]),
        .init("webhook_url", "ftp://127.0.0.1/hooks", also: ["SIWA_WEBHOOK_SECRET": "whsec_" + Data(repeating: 1, count: 32).base64EncodedString()]),
        .init("webhook_url", "", also: ["SIWA_WEBHOOK_SECRET": "whsec_" + Data(repeating: 1, count: 32).base64EncodedString()]),
        .init("webhook_secret", "\(secretMarker)", also: ["SIWA_WEBHOOK_URL": "http://127.0.0.1:9/hooks"]),
        .init("webhook_secret", "whsec_" + Data(repeating: 1, count: 23).base64EncodedString(), also: ["SIWA_WEBHOOK_URL": "http://127.0.0.1:9/hooks"]),
        .init("webhook_secret", "whsec_" + Data(repeating: 1, count: 65).base64EncodedString(), also: ["SIWA_WEBHOOK_URL": "http://127.0.0.1:9/hooks"]),
        .init("webhook_secret", "", also: ["SIWA_WEBHOOK_URL": "http://127.0.0.1:9/hooks"]),
        .init("webhook_backoff", "0s"),
        .init("webhook_retention", "forever"),
        .init("admin_token", "short-\(secretMarker)"),
        .init("access_token_ttl", "2h"),
        .init("access_token_ttl", "0"),
        .init("access_token_audience", "a\u{7}b"),
        .init("signing_key_rotation", "0"),
        .init("signing_key_rotation", "59m"),
        .init("allowed_return_schemes", "https"),
        .init("allowed_return_schemes", "com.example.app,JavaScript"),
        .init("allowed_return_schemes", "1app"),
        .init("allowed_return_schemes", "com.example.app,,x"),
        .init("smtp_url", "https://mail.example.com", also: ["SIWA_EMAIL_FROM": "noreply@example.com"]),
        .init("smtp_url", "smtp://mailer:\(secretMarker)@mail example.com", also: ["SIWA_EMAIL_FROM": "noreply@example.com"]),
        .init("smtp_url", "smtp://mailer:\(secretMarker)@mail.example.com/path", also: ["SIWA_EMAIL_FROM": "noreply@example.com"]),
        .init("email_from", "", also: ["SIWA_SMTP_URL": "smtp://mailer:\(secretMarker)@mail.example.com"]),
        .init("email_from", "Siwa <not an address>", also: ["SIWA_SMTP_URL": "smtp://mail.example.com"]),
        .init("email_from", "noreply@example.com\r\nBcc: x@example.com", also: ["SIWA_SMTP_URL": "smtp://mail.example.com"]),
        .init("smtp_ca_file", "/nonexistent/siwa/smtp-ca.pem"),
        .init("email_retention", "0"),
        .init("email_retention", "a while"),
        .init("audit_retention", "0"),
        .init("audit_retention", "forever"),
    ]

    /// docs/guides/passwords-and-email.md: the mail settings as typed values; the password only ever shown masked.
    @Test func mailSettingsLoadAndTheSMTPPasswordIsMasked() throws {
        let config = try load([
            "SIWA_SMTP_URL": "smtps://mailer%40example.com:\(secretMarker)@mail.example.com",
            "SIWA_EMAIL_FROM": "Siwa Server <noreply@example.com>",
            "SIWA_EMAIL_RETENTION": "2h",
        ])
        #expect(config.smtpURL?.host == "mail.example.com" && config.smtpURL?.port == 465)
        #expect(config.emailFrom?.address == "noreply@example.com" && config.emailFrom?.displayName == "Siwa Server")
        #expect(config.emailRetention == .seconds(7_200))
        let summary = Dictionary(uniqueKeysWithValues: config.summary().map { ($0.key, $0.value) })
        #expect(summary["smtp_url"] == "smtps://mailer%40example.com:***@mail.example.com:465")
        #expect(summary["email_retention"] == "2h")
        #expect(!config.summary().map(\.value).joined().contains(secretMarker))

        let defaults = try load([:])
        #expect(defaults.smtpURL == nil && defaults.emailFrom == nil && defaults.emailRetention == .seconds(86_400))
        #expect(try load(["SIWA_EMAIL_FROM": "noreply@example.com"]).emailFrom?.address == "noreply@example.com", "a sender alone sends nothing")
    }

    @Test(arguments: invalidSettings)
    func invalidValueNamesItsKey(setting: InvalidSetting) {
        let error = loadError(setting.environment)
        #expect(error?.key == setting.key)
        #expect(error?.description.hasPrefix(setting.key + ": ") == true)
        #expect(error?.description.contains("\n") == false)
        #expect(error?.description.contains(secretMarker) == false)
    }

    @Test func everyKeyHasAnInvalidCase() {
        let covered = Set(Self.invalidSettings.map(\.key))
        #expect(covered == Set(ConfigurationKey.allCases.map(\.rawValue)))
    }

    @Test(arguments: [
        (#"{"threads": "four"}"#, "threads"),
        (#"{"threads": 2.5}"#, "threads"),
        (#"{"threads": true}"#, "threads"),
        (#"{"require_nonce": "maybe"}"#, "require_nonce"),
        (#"{"require_nonce": 2}"#, "require_nonce"),
        (#"{"listen": 8080}"#, "listen"),
        (#"{"session_ttl": 1.5}"#, "session_ttl"),
        (#"{"session_ttl": -5}"#, "session_ttl"),
        (#"{"session_ttl": true}"#, "session_ttl"),
        (#"{"client_ids": [1, 2]}"#, "client_ids"),
        (#"{"client_ids": {"a": 1}}"#, "client_ids"),
        (#"{"trusted_proxies": 10}"#, "trusted_proxies"),
        (#"{"private_key": 12345}"#, "private_key"),
    ])
    func wrongJSONTypeNamesItsKey(json: String, key: String) throws {
        #expect(try jsonError(json)?.key == key)
    }

    // MARK: CIDRSet

    @Test func cidrSetIPv4() throws {
        let set = try CIDRSet(cidrs: ["10.0.0.0/8", "192.168.1.7", "172.16.5.9/12"])
        #expect(set.contains("10.1.2.3"))
        #expect(set.contains("10.255.255.255"))
        #expect(!set.contains("11.0.0.1"))
        #expect(set.contains("192.168.1.7"))
        #expect(!set.contains("192.168.1.8"))
        #expect(set.contains("172.31.0.1"))
        #expect(!set.contains("172.32.0.1"))
        #expect(set.contains("::ffff:10.9.8.7"))  // IPv4 client seen on an IPv6 socket
        #expect(!set.contains("not an address"))
        #expect(!set.contains("::1"))
        #expect(set.cidrs == ["10.0.0.0/8", "192.168.1.7/32", "172.16.0.0/12"])
    }

    @Test func cidrSetIPv6() throws {
        let set = try CIDRSet(cidrs: ["::1/128", "fd00::/8", "2001:db8:abcd::/48"])
        #expect(set.contains("::1"))
        #expect(set.contains("[::1]"))
        #expect(!set.contains("::2"))
        #expect(set.contains("fd12:3456::1"))
        #expect(!set.contains("fe80::1"))
        #expect(set.contains("2001:db8:abcd:12::5"))
        #expect(!set.contains("2001:db8:abce::5"))
        #expect(!set.contains("127.0.0.1"))
    }

    @Test func cidrSetEdges() throws {
        #expect(try CIDRSet(cidrs: ["0.0.0.0/0"]).contains("203.0.113.9"))
        #expect(try CIDRSet(cidrs: ["::/0"]).contains("2001:db8::1"))
        #expect(try CIDRSet(cidrs: ["10.1.2.3/8"]).contains("10.200.0.1"))
        #expect(!CIDRSet().contains("127.0.0.1"))
        #expect(throws: CIDRSet.InvalidCIDR(text: "1.2.3.4/40")) { try CIDRSet(cidrs: ["1.2.3.4/40"]) }
        #expect(throws: CIDRSet.InvalidCIDR.self) { try CIDRSet(cidrs: ["10.0.0.0/8/8"]) }
        #expect(throws: CIDRSet.InvalidCIDR.self) { try CIDRSet(cidrs: ["10.0.0.0/-1"]) }
    }

    // MARK: Summary

    @Test func summaryListsEveryKeyAndHidesSecrets() throws {
        let dataKey = Data(repeating: 9, count: 32).base64EncodedString()
        let config = try load([
            "SIWA_PRIVATE_KEY": fakePEM,
            "SIWA_DATA_KEY": dataKey,
            "SIWA_TEAM_ID": "ABCDE12345",
            "SIWA_TRUSTED_PROXIES": "10.0.0.0/8,::1",
        ])
        let summary = config.summary()
        #expect(summary.map(\.key) == ConfigurationKey.allCases.map(\.rawValue))
        let values = Dictionary(uniqueKeysWithValues: summary.map { ($0.key, $0.value) })
        #expect(values["private_key"] == "set (\(fakePEM.trimmedSetting.utf8.count) bytes)")
        #expect(values["data_key"] == "set (32 bytes)")
        #expect(values["team_id"] == "ABCDE12345")
        #expect(values["session_ttl"] == "30d")
        #expect(values["listen"] == "127.0.0.1:8080")
        #expect(values["trusted_proxies"] == "10.0.0.0/8,::1/128")
        let all = summary.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        #expect(!all.contains(secretMarker))
        #expect(!all.contains(dataKey))

        let empty = Dictionary(uniqueKeysWithValues: try load().summary().map { ($0.key, $0.value) })
        #expect(empty["private_key"] == "not set")
        #expect(empty["data_key"] == "not set")
    }

    // MARK: Shipped example

    private static let configFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config")

    @Test func exampleFileListsEveryKeyAndLoads() throws {
        let path = Self.configFolder.appendingPathComponent("siwa.example.json").path
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        let keys = Set(try #require(object as? [String: Any]).keys)
        #expect(keys == Set(ConfigurationKey.allCases.map(\.rawValue)))
        // The example names a key file that does not exist here; blank it as an operator could.
        let config = try load(["SIWA_PRIVATE_KEY_FILE": ""], file: path)
        #expect(config.clientIDs == ["com.example.app", "com.example.web"])
        #expect(config.sessionTTL == .seconds(30 * 86_400))
    }

    @Test func bestEffortLogFormat() throws {
        #expect(Configuration.bestEffortLogFormat(file: nil, environment: ["SIWA_LOG_FORMAT": "json"], isTerminal: true) == .json)
        #expect(Configuration.bestEffortLogFormat(file: nil, environment: [:], isTerminal: true) == .text)
        let file = try TemporaryFile(#"{"log_format": "json", "team_id": "bad"}"#)
        defer { file.remove() }
        #expect(Configuration.bestEffortLogFormat(file: file.path, environment: [:], isTerminal: true) == .json)
    }
}

/// Issue 9, finding 9: what an operator meets first. `serve` names what it cannot work
/// without; `check-config` reports every problem; a short `session_ttl` alone starts.
@Suite struct ConfigurationRequirementTests {
    static let complete = [
        "SIWA_TEAM_ID": "ABCDE12345", "SIWA_KEY_ID": "KEY1234567", "SIWA_CLIENT_IDS": "com.example.app",
    ]

    static func completeEnvironment() throws -> [String: String] {
        var environment = complete
        environment["SIWA_PRIVATE_KEY"] = try P256PrivateKey.generate().pem()
        return environment
    }

    @Test(arguments: ["3s", "24h", "7d", "8d"])
    func aSessionTTLAloneIsEnough(_ ttl: String) throws {
        let config = try load(["SIWA_SESSION_TTL": ttl])
        let seconds = try DurationParser.seconds(ttl)
        #expect(config.sessionTTL == .seconds(seconds))
        #expect(config.sessionIdleTTL == .seconds(min(seconds, 7 * 86_400)))
    }

    @Test func aLongerIdleTTLIsAllowedAndTheShorterWins() throws {
        #expect(try load(["SIWA_SESSION_IDLE_TTL": "31d"]).sessionIdleTTL == .seconds(30 * 86_400))
        #expect(try load(["SIWA_SESSION_TTL": "1d", "SIWA_SESSION_IDLE_TTL": "2d"]).sessionIdleTTL == .seconds(86_400))
        #expect(try load(["SIWA_SESSION_TTL": "1d", "SIWA_SESSION_IDLE_TTL": "1h"]).sessionIdleTTL == .seconds(3_600))
    }

    @Test func aCompleteConfigurationHasNothingMissingForServe() throws {
        #expect(try load(Self.completeEnvironment()).serveProblems.isEmpty)
    }

    @Test(arguments: ["SIWA_TEAM_ID", "SIWA_KEY_ID", "SIWA_CLIENT_IDS", "SIWA_PRIVATE_KEY"])
    func serveNamesWhatIsMissing(_ variable: String) throws {
        var environment = try Self.completeEnvironment()
        environment[variable] = nil
        let problems = try load(environment).serveProblems
        #expect(problems.map(\.key) == [String(variable.dropFirst(5)).lowercased()])
    }

    @Test func serveRefusesAKeyThatCannotSignClientSecrets() throws {
        var environment = try Self.completeEnvironment()
        environment["SIWA_PRIVATE_KEY"] = try TestSigningKeys.one().pem()
        let rsa = try load(environment).serveProblems
        #expect(rsa.map(\.key) == ["private_key"])
        #expect(rsa.first?.problem.contains("P-256") == true)
        // Garbage inside a well-formed envelope gets past the envelope check, not past this one.
        environment["SIWA_PRIVATE_KEY"] = fakePEM
        let garbage = try load(environment).serveProblems
        #expect(garbage.map(\.key) == ["private_key"])
        #expect(garbage.first?.description.contains(secretMarker) == false)
    }

    @Test func checkReportsEveryProblemAndStillReadsTheRest() throws {
        let file = try TemporaryFile(#"{"public_url": "localhost:8080", "sesion_ttl": "1d", "threads": 3}"#)
        defer { file.remove() }
        let (configuration, problems) = Configuration.loadReportingProblems(file: file.path, environment: [
            "SIWA_APPLE_BASE_URL": "http://appleid.example.com", "SIWA_PRIVATE_KEY_FILE": "/nonexistent/AuthKey.p8",
            "SIWA_TEAM_ID": "ABCDE12345",
        ], isTerminal: false)
        #expect(Set(problems.map(\.key)) == ["public_url", "sesion_ttl", "apple_base_url", "private_key_file"])
        let read = try #require(configuration)
        #expect(read.teamID == "ABCDE12345")
        #expect(read.threads == 3)
        #expect(read.appleBaseURL == Configuration.defaultAppleBaseURL)
    }

    @Test func checkReportsAnUnreadableFileAndGoesOn() {
        let (configuration, problems) = Configuration.loadReportingProblems(
            file: "/nonexistent/siwa.json", environment: ["SIWA_THREADS": "0"], isTerminal: false)
        #expect(problems.map(\.key) == ["config", "threads"])
        #expect(configuration != nil)
    }
}
