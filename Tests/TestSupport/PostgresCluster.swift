import Foundation
import PostgreSQL
import Synchronization

/// A throwaway PostgreSQL server for tests, run by `Scripts/postgres-cluster` in a temporary
/// folder. `shared()` starts one per test process on first use; each test then takes a fresh
/// database of its own with `makeDatabase()`, so tests running in parallel never see each
/// other's tables. A test that stops or restarts the server starts a cluster of its own with
/// `start()` instead, and `stop()`s it.
///
/// The script's watchdog stops the cluster and removes its folder once this process has ended,
/// however it ended.
///
/// Tests that need PostgreSQL guard themselves with `.enabled(if: PostgresCluster.testsEnabled)`.
public final class PostgresCluster: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let directory: String
    public let port: Int
    /// The URL of database `siwa`, role `siwa` (superuser, no password from 127.0.0.1).
    public let url: String
    /// Creates the test databases; one connection, so creations never overlap.
    private let admin: PostgresPool
    /// Templates by name, each made once (see `makeDatabase(template:preparedBy:)`).
    private let templates = Mutex<[String: Task<String, any Error>]>([:])

    private init(directory: String, url: String) throws {
        self.directory = directory
        self.url = url
        guard let port = url.split(separator: ":").last?.split(separator: "/").first.flatMap({ Int($0) }) else {
            throw Failure(description: "postgres-cluster printed no URL with a port: \(url)")
        }
        self.port = port
        admin = try PostgresPool(url, size: 1, applicationName: "siwa-test-admin")
    }

    // MARK: - Whether to run

    /// PostgreSQL's server binaries are where the script looks for them.
    public static let isInstalled: Bool = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        if versions.contains(where: { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb") }) {
            return true
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }()

    /// Whether PostgreSQL tests run: when it is installed, and always under CI (`CI=true`),
    /// where a missing PostgreSQL must fail them rather than skip them. Elsewhere they are
    /// skipped, and this says so loudly on standard error, once a process.
    public static let testsEnabled: Bool = {
        if isInstalled || ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        FileHandle.standardError.write(Data("""
            WARNING: PostgreSQL is not installed: the PostgreSQL tests are SKIPPED, not passed.
            WARNING: install it with Scripts/install-packages (Debian: postgresql libpq-dev).

            """.utf8))
        return false
    }()

    // MARK: - Starting

    private static let sharedCluster = Mutex<Task<PostgresCluster, any Error>?>(nil)

    /// The process's shared cluster, started by the first caller.
    public static func shared() async throws -> PostgresCluster {
        let task = sharedCluster.withLock { task in
            if let task { return task }
            let started = Task { try await start() }
            task = started
            return started
        }
        return try await task.value
    }

    /// A new cluster of this test's own; `stop()` it when done.
    public static func start() async throws -> PostgresCluster {
        guard isInstalled else {
            throw Failure(description: "PostgreSQL is missing: no initdb under /usr/lib/postgresql/*/bin (CI must install postgresql; see Scripts/install-packages)")
        }
        let directory = clusterParent() + "siwa-pg-" + UUID().uuidString.prefix(8).lowercased()
        let output = try await script(["start", directory, "--owner", String(getpid())])
        let url = output.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return try PostgresCluster(directory: directory, url: url)
        } catch {
            _ = try? await script(["stop", directory])
            throw error
        }
    }

    /// Memory (/dev/shm) where there is one: a database is some 300 files, and creating them
    /// there takes a fifth of the time it takes on disk. Otherwise /tmp when root (the server
    /// runs as siwa-pg, which must reach the folder, whatever TMPDIR says), or TMPDIR. Short
    /// either way: the socket's path must fit in 107 bytes.
    private static func clusterParent() -> String {
        if access("/dev/shm", W_OK | X_OK) == 0 { return "/dev/shm/" }
        return getuid() == 0 ? "/tmp/" : NSTemporaryDirectory()
    }

    // MARK: - Databases

    /// Creates an empty database and returns its URL.
    public func makeDatabase() async throws -> String {
        try await makeDatabase(template: nil)
    }

    /// Creates a database as a copy of template `template` (a word of letters and underscores),
    /// which `prepare` makes from an empty database the first time this cluster is asked for it
    /// (every caller waits for that one). Copying a prepared database costs what creating an
    /// empty one does; migrating each of the suite's ~300 PostgreSQL databases cost ~70 ms more.
    public func makeDatabase(template: String, preparedBy prepare: @escaping @Sendable (_ url: String) throws -> Void) async throws -> String {
        let made = templates.withLock { templates in
            if let made = templates[template] { return made }
            let name = "template_" + template
            let made = Task { [self] in
                try await admin.withConnection { try $0.execute("CREATE DATABASE \(name)") }
                try prepare(url(database: name))
                return name
            }
            templates[template] = made
            return made
        }
        return try await makeDatabase(template: try await made.value)
    }

    private func makeDatabase(template: String?) async throws -> String {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        // Identifiers cannot be parameters; the names are ours, made of hex digits and words.
        // A template's preparer has closed its connections; should its server process not have
        // ended yet, PostgreSQL waits for it (up to 5 s) before copying.
        let sql = template.map { "CREATE DATABASE \(name) TEMPLATE \($0)" } ?? "CREATE DATABASE \(name)"
        try await admin.withConnection { try $0.execute(sql) }
        return url(database: name)
    }

    /// The URL of database `name` on this cluster.
    public func url(database name: String) -> String {
        "postgres://siwa@127.0.0.1:\(port)/\(name)"
    }

    /// The server processes of the connections to the database of `url` (one of this
    /// cluster's) whose application name is `applicationName`, in no order.
    public func backendProcessIDs(database url: String, applicationName: String) async throws -> Set<Int32> {
        let name = String(url.split(separator: "/").last ?? "")
        return try await admin.withConnection { connection in
            Set(try connection.query(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2", [.text(name), .text(applicationName)]
            ).map { Int32(try $0.int(0)) })
        }
    }

    // MARK: - Server control

    /// Stops the server and keeps its data (connections fail until `resume()`).
    public func pause() async throws { _ = try await Self.script(["pause", directory]) }
    /// Starts a paused server again, on the same port.
    public func resume() async throws { _ = try await Self.script(["resume", directory]) }
    /// Stops and starts the server (`pg_ctl restart -m fast`): every connection is ended.
    public func restart() async throws { _ = try await Self.script(["restart", directory]) }

    /// Stops the server and removes its folder. For clusters from `start()`, not `shared()`.
    public func stop() async throws {
        admin.close()
        _ = try await Self.script(["stop", directory])
    }

    // MARK: - The script

    /// `Scripts/postgres-cluster`, found from this file's place in the package.
    static let scriptPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/postgres-cluster").path

    /// Runs the script to completion; its standard output, or its complaint as the error.
    @discardableResult
    private static func script(_ arguments: [String]) async throws -> String {
        let child = try ChildProcess(executable: scriptPath, arguments: arguments, environment: ProcessInfo.processInfo.environment)
        let termination = await child.wait(seconds: 120)
        guard termination == .exited(0) else {
            let reason = termination == .exited(3) ? "PostgreSQL is missing. " : ""
            throw Failure(description: "\(reason)postgres-cluster \(arguments.joined(separator: " ")) failed (\(termination)): \(child.stderrText)")
        }
        return child.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
