import TestSupport
import AppleSimulator
import Foundation
import OpenSSLCrypto
import Testing

/// The binary as an operator runs it (docs/reference/command-line.md): exit codes, output, signals.
@Suite struct CommandLineTests {
    static let listenAnyPort = ["SIWA_LISTEN": "127.0.0.1:0", "SIWA_LOG_FORMAT": "json"]

    /// `listenAnyPort` plus what `serve` needs to start: a team, a key and an audience.
    static func servable() throws -> [String: String] {
        listenAnyPort.merging([
            "SIWA_TEAM_ID": "ABCDE12345", "SIWA_KEY_ID": "KEY1234567", "SIWA_PRIVATE_KEY": try P256PrivateKey.generate().pem(),
            "SIWA_CLIENT_IDS": "com.example.app",
        ]) { $1 }
    }

    @Test(arguments: [
        [], ["serve"], ["migrate"], ["check-config"], ["doctor"], ["client-secret"], ["verify-token"], ["apple-sim"],
        ["webhooks"], ["webhooks", "failed"], ["webhooks", "retry"], ["users"], ["rotate-signing-key"],
        ["transfer"], ["transfer", "export"], ["transfer", "import"], ["transfer", "status"], ["events"],
    ])
    func helpWorksOnEveryCommand(_ command: [String]) async throws {
        let result = try await ServerProcess.run(command + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: siwa-server"))
    }

    @Test(arguments: [
        ("SIWA_SESSION_TTL", "3x", "session_ttl"),
        ("SIWA_LISTEN", "not-an-address", "listen"),
        ("SIWA_THREADS", "0", "threads"),
        ("SIWA_APPLE_BASE_URL", "http://appleid.example.com", "apple_base_url"),
        ("SIWA_DATA_KEY", "c2VjcmV0LWtleS10aGF0LWlzLXRvby1zaG9ydA==", "data_key"),
    ])
    func aBadSettingEndsWithExitCode2AndOneLineNamingTheKey(_ variable: String, _ value: String, _ key: String) async throws {
        let result = try await ServerProcess.run(["serve"], environment: [variable: value])
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\(key):") == true)
        #expect(!result.stderr.contains("c2VjcmV0LWtleS10aGF0LWlzLXRvby1zaG9ydA"))
    }

    @Test func inJSONModeTheConfigurationErrorIsAJSONLine() async throws {
        let result = try await ServerProcess.run(["serve"], environment: ["SIWA_LOG_FORMAT": "json", "SIWA_SESSION_TTL": "forever"])
        #expect(result.status == 2)
        let object = try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any]
        #expect(object?["level"] as? String == "critical")
        #expect((object?["message"] as? String)?.contains("session_ttl") == true)
    }

    @Test func theEnvironmentBeatsTheConfigurationFile() async throws {
        let folder = ServerProcess.makeFolder()
        try #"{"session_ttl": "20d", "database": "from-file.sqlite3"}"#.write(toFile: folder + "/siwa.json", atomically: true, encoding: .utf8)
        let result = try await ServerProcess.run(
            ["check-config", "--config", "siwa.json"], environment: ["SIWA_DATABASE": "from-env.sqlite3"], folder: folder)
        #expect(result.stdout.contains("database = from-env.sqlite3"))
        #expect(result.stdout.contains("session_ttl = 20d"))
        #expect(FileManager.default.fileExists(atPath: folder + "/from-env.sqlite3"))
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aMissingConfigFileIsAConfigurationError() async throws {
        let result = try await ServerProcess.run(["serve", "--config", "nope.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("config:"))
    }

    /// docs/reference/configuration.md: without these the server would listen and fail every sign-in with no hint.
    @Test(arguments: [
        ("SIWA_TEAM_ID", nil, "team_id"), ("SIWA_KEY_ID", nil, "key_id"), ("SIWA_CLIENT_IDS", nil, "client_ids"),
        ("SIWA_PRIVATE_KEY", nil, "private_key"), ("SIWA_PRIVATE_KEY", "rsa", "private_key"),
        ("SIWA_PRIVATE_KEY", "garbage", "private_key"), ("SIWA_PRIVATE_KEY", "envelope", "private_key"),
        ("SIWA_PRIVATE_KEY_FILE", "/nonexistent/AuthKey.p8", "private_key_file"),
    ] as [(String, String?, String)])
    func serveWithoutWhatItNeedsEndsWithExitCode2NamingTheKey(_ variable: String, _ value: String?, _ key: String) async throws {
        var environment = try Self.servable()
        switch value {
        case "rsa": environment[variable] = try TestSigningKeys.one().pem()
        case "garbage": environment[variable] = "GARBAGE-KEY-TEXT"
        case "envelope": environment[variable] = "-----BEGIN PRIVATE KEY-----\nR0FSQkFHRS1LRVktVEVYVA==\n-----END PRIVATE KEY-----\n"
        default: environment[variable] = value
        }
        if variable == "SIWA_PRIVATE_KEY_FILE" { environment["SIWA_PRIVATE_KEY"] = nil }
        let result = try await ServerProcess.run(["serve"], environment: environment)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("\(key):") == true, "\(result.stderr)")
        #expect(!result.stdout.contains("listening"))
        #expect(!result.stderr.contains("GARBAGE-KEY-TEXT") && !result.stderr.contains("R0FSQkFHRS1LRVktVEVYVA"))
    }

    @Test(arguments: ["3s", "24h"])
    func aShortSessionTTLAloneStarts(_ ttl: String) async throws {
        var environment = try Self.servable()
        environment["SIWA_SESSION_TTL"] = ttl
        let server = try ServerProcess(["serve"], environment: environment)
        #expect(await server.waitForPort() != nil, "stderr: \(server.stderrText)")
        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 15) == 0)
    }

    /// `check-config` reports, so it never ends with 2, and it reports every problem at once.
    @Test func checkConfigReportsEveryProblemWithExitCode1() async throws {
        let folder = ServerProcess.makeFolder()
        try #"{"public_url": "localhost:8080", "sesion_ttl": "1d"}"#.write(toFile: folder + "/siwa.json", atomically: true, encoding: .utf8)
        let result = try await ServerProcess.run(["check-config", "--config", "siwa.json"], environment: [
            "SIWA_APPLE_BASE_URL": "http://appleid.example.com", "SIWA_PRIVATE_KEY_FILE": "missing/AuthKey.p8",
            "SIWA_TEAM_ID": "ABCDE12345",
        ], folder: folder)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        for key in ["public_url", "sesion_ttl", "apple_base_url", "private_key_file", "key_id", "client_ids"] {
            #expect(result.stdout.contains("FAIL \(key): "), "\(key) in \(result.stdout)")
        }
        #expect(result.stdout.contains("ok   team_id"))
        #expect(result.stdout.contains("ok   database"))
        #expect(result.stdout.contains("configuration has problems"))
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func checkConfigReportsAMissingConfigFileWithExitCode1() async throws {
        let result = try await ServerProcess.run(["check-config", "--config", "nope.json"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL config: "))
    }

    @Test func migrateTwiceIsANoOpTheSecondTime() async throws {
        let folder = ServerProcess.makeFolder()
        let first = try await ServerProcess.run(["migrate"], folder: folder)
        #expect(first.status == 0)
        #expect(first.stdout.contains("applied 1 server_state"))
        #expect(first.stdout.contains("applied 2 accounts"))
        let second = try await ServerProcess.run(["migrate"], folder: folder)
        #expect(second.status == 0)
        #expect(second.stdout.contains("is up to date"))
        #expect(!second.stdout.contains("applied"))
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func checkConfigReportsMissingAppleSettingsWithExitCode1() async throws {
        let result = try await ServerProcess.run(["check-config"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL team_id"))
        #expect(result.stdout.contains("ok   database"))
        #expect(result.stdout.contains("configuration has problems"))
    }

    @Test func checkConfigPassesACompleteConfigurationAndMasksSecrets() async throws {
        let pem = try P256PrivateKey.generate().pem()
        let result = try await ServerProcess.run(["check-config"], environment: [
            "SIWA_TEAM_ID": "ABCDE12345", "SIWA_KEY_ID": "KEY1234567", "SIWA_PRIVATE_KEY": pem,
            "SIWA_CLIENT_IDS": "com.example.app,com.example.web",
        ])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("configuration is valid"))
        let keyBody = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
        #expect(!result.stdout.contains(keyBody))
        #expect(result.stdout.contains("ok   private_key: PKCS#8 P-256 key, signs ES256"))
    }

    @Test func checkConfigRefusesAKeyThatIsNotP256() async throws {
        let rsa = try TestSigningKeys.one().pem()
        let result = try await ServerProcess.run(["check-config"], environment: [
            "SIWA_TEAM_ID": "ABCDE12345", "SIWA_KEY_ID": "KEY1234567", "SIWA_PRIVATE_KEY": rsa, "SIWA_CLIENT_IDS": "com.example.app",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL private_key: P-256 private key: not an EC key on the P-256 curve"))
    }

    @Test func checkConfigFailsWhenTheDatabaseCannotBeWritten() async throws {
        let folder = ServerProcess.makeFolder()
        try "not a folder".write(toFile: folder + "/blocker", atomically: true, encoding: .utf8)
        let result = try await ServerProcess.run(["check-config"], environment: ["SIWA_DATABASE": "blocker/db.sqlite3"], folder: folder)
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL database"))
        try? FileManager.default.removeItem(atPath: folder)
    }
}

@Suite struct ClientSecretCommandTests {
    @Test func printsAnES256SecretThatVerifiesWithTheConfiguredKey() async throws {
        let key = try P256PrivateKey.generate()
        let result = try await ServerProcess.run(["client-secret", "--client-id", "com.example.web"], environment: [
            "SIWA_TEAM_ID": "ABCDE12345", "SIWA_KEY_ID": "KEY1234567", "SIWA_PRIVATE_KEY": try key.pem(),
            "SIWA_CLIENT_IDS": "com.example.app",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let parts = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let claims = String(decoding: base64URL(parts[1]), as: UTF8.self)
        #expect(claims.contains(#""iss":"ABCDE12345""#) && claims.contains(#""sub":"com.example.web""#))
        #expect(claims.contains(#""aud":"https://appleid.apple.com""#))
        #expect(String(decoding: base64URL(parts[0]), as: UTF8.self) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(key.publicKey.verifyES256(signature: base64URL(parts[2]), message: Array("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func defaultsToTheWebClientID() async throws {
        let result = try await ServerProcess.run(["client-secret"], environment: [
            "SIWA_TEAM_ID": "ABCDE12345", "SIWA_KEY_ID": "KEY1234567", "SIWA_PRIVATE_KEY": try P256PrivateKey.generate().pem(),
            "SIWA_CLIENT_IDS": "com.example.app,com.example.web", "SIWA_WEB_CLIENT_ID": "com.example.web",
        ])
        let parts = result.stdout.split(separator: ".").map(String.init)
        #expect(String(decoding: base64URL(parts[1]), as: UTF8.self).contains(#""sub":"com.example.web""#))
    }

    @Test func missingCredentialsAreAConfigurationError() async throws {
        let result = try await ServerProcess.run(["client-secret"], environment: ["SIWA_KEY_ID": "KEY1234567"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("team_id: required to talk to Apple"))
    }
}

func base64URL(_ text: String) -> [UInt8] {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return [UInt8](Data(base64Encoded: base64) ?? Data())
}

@Suite struct ServeTests {
    @Test func servesAndStopsGracefullyOnSIGTERM() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        var environment = try CommandLineTests.servable()
        environment["SIWA_APPLE_BASE_URL"] = simulator.baseURL
        let server = try ServerProcess(["serve"], environment: environment)
        let port = try #require(await server.waitForPort(), "stdout: \(server.stdoutText) stderr: \(server.stderrText) running: \(server.isRunning)")
        let health = try await HTTPRequest.get(port: port, path: "/healthz")
        #expect(health.contains("200 OK") && health.hasSuffix(#"{"status":"ok"}"#))
        var ready = try await HTTPRequest.get(port: port, path: "/readyz")
        for _ in 0..<2400 where !ready.hasSuffix(#"{"status":"ready"}"#) {
            try await Task.sleep(for: .milliseconds(25))
            ready = try await HTTPRequest.get(port: port, path: "/readyz")
        }
        #expect(ready.hasSuffix(#"{"status":"ready"}"#))
        await simulator.stop()
        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 15) == 0)
        // Every line is one JSON object (docs/guides/operating.md), from start to the last line at stop.
        let lines = server.stdoutText.split(separator: "\n")
        #expect(lines.count >= 4)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["time"] != nil && object?["level"] != nil && object?["message"] != nil, "\(line)")
        }
        #expect(lines.last?.contains("\"stopped\"") == true)
        #expect(server.stderrText.isEmpty)
    }

    /// SIGINT stops the server as SIGTERM does: exit 0, and a kept-alive connection is closed.
    /// (Connecting to the port afterwards would prove nothing: another test may own it by then.)
    @Test func sigintStopsTooAndClosesKeptAliveConnections() async throws {
        let server = try ServerProcess(["serve"], environment: try CommandLineTests.servable())
        let port = try #require(await server.waitForPort(), "stdout: \(server.stdoutText) stderr: \(server.stderrText) running: \(server.isRunning)")
        let held = try HeldConnection(port: port)
        #expect(try await held.exchange("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").contains(#"{"status":"ok"}"#))
        server.signal(SIGINT)
        #expect(await server.wait(seconds: 15) == 0)
        #expect(try await held.readUntilClosed() == "")
        #expect(server.stdoutText.contains("\"stopped\""))
    }

    @Test func anAddressInUseIsAClearStartupFailure() async throws {
        let first = try ServerProcess(["serve"], environment: try CommandLineTests.servable())
        let port = try #require(await first.waitForPort())
        var taken = try CommandLineTests.servable()
        taken["SIWA_LISTEN"] = "127.0.0.1:\(port)"
        let second = try ServerProcess(["serve"], environment: taken)
        // SO_REUSEPORT would let a second process share the port; it must not.
        let status = await second.wait(seconds: 10)
        #expect(status == 1)
        #expect(second.stderrText.contains("cannot start"))
        first.signal(SIGTERM)
        #expect(await first.wait(seconds: 15) == 0)
    }
}

/// One request per connection; the blocking socket work runs on a thread of its own, so a
/// test never holds one of the two cooperative threads while it waits.
enum HTTPRequest {
    struct Failure: Error {}

    static func get(port: UInt16, path: String) async throws -> String {
        try await send(port: port, "GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    }

    /// Sends `request` as is and returns everything until the server closes.
    static func send(port: UInt16, _ requestText: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try sendBlocking(port: port, requestText) }) }
        }
    }

    private static func sendBlocking(port: UInt16, _ requestText: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        // Longer than SQLite's 5 s busy timeout: a test of a locked database waits that long for
        // its 500.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure() }
        let request = Array(requestText.utf8)
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}

/// One kept-alive connection whose blocking reads run on a thread of their own.
final class HeldConnection: @unchecked Sendable {
    private let fd: Int32

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HTTPRequest.Failure() }
    }

    deinit { close(fd) }

    /// Sends every byte (blocking while the server does not read), stopping early only when the
    /// connection fails.
    func sendBlocking(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// True when a response or the end of the connection waits to be read; nothing is read.
    var hasInput: Bool {
        var readable = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&readable, 1, 0) > 0
    }

    /// The client's own port, which the server sees as the peer's.
    var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Sends `request` and returns what has arrived once a whole `Content-Length` response is in.
    func exchange(_ request: String) async throws -> String {
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return try await onOwnThread { [fd] in
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains("}") {
                let count = recv(fd, &chunk, chunk.count, 0)
                if count <= 0 { break }
                received.append(contentsOf: chunk[0..<count])
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Reads until the server closes the connection; what arrived meanwhile.
    func readUntilClosed() async throws -> String {
        try await onOwnThread { [fd] in
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &chunk, chunk.count, 0)
                if count == 0 { return String(decoding: received, as: UTF8.self) }
                if count < 0 { throw HTTPRequest.Failure() }
                received.append(contentsOf: chunk[0..<count])
            }
        }
    }
}
