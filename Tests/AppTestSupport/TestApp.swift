import AppleSimulator
import Foundation
import HTTPServer
import Logging
import SiwaApp
import Store
import Synchronization
import TestSupport

/// A started application for one test: its own database on the given engine, its own Apple ID
/// simulator, its log lines collected, and `send`, which reaches the responder in process or
/// over the socket. `withApp` makes one and stops it, whatever the test did.
public final class TestApp: Sendable {
    public let application: Application
    public let simulator: AppleIDSimulator
    /// The application's own log lines and its access lines, JSON, one per entry.
    public let lines: LinesCollector
    /// Where both kinds of lines go; `flush` before reading `lines`.
    public let sink: LogSink
    public let engine: DatabaseEngine
    /// How `send` travels unless told otherwise.
    public let transport: Transport
    /// The held wall clock, when the test holds one.
    public let clock: HeldClock?
    /// The SQLite database's folder (nil on PostgreSQL), removed at stop.
    public let folder: String?
    private let applicationStopped = Mutex(false)
    private let stopped = Mutex(false)
    /// Its place among the applications running at once (`AppSlots`), held until `stop`; nil for
    /// an application started inside another's scope, which shares that one's.
    private let slot: AppSlot?

    /// The data key a PostgreSQL application seals Apple's tokens with (SQLite makes a key file).
    public static let postgresDataKey = [UInt8](repeating: 7, count: 32)

    /// With `drainsInBackground` false, only a flush (the application's stop) writes lines.
    public init(
        engine: DatabaseEngine = .sqlite, transport: Transport = .inProcess, clock: HeldClock? = nil, drainsInBackground: Bool = true,
        configure: (inout Configuration) -> Void = { _ in }
    ) async throws {
        // Before anything starts: the slot bounds applications alive at once, and a throw below
        // gives it back with the local.
        slot = AppSlots.inScope ? nil : try await AppSlots.shared.take()
        self.engine = engine
        self.transport = transport
        self.clock = clock
        var configuration = Configuration()
        switch engine {
        case .sqlite:
            let folder = NSTemporaryDirectory() + "siwa-app-" + UUID().uuidString
            configuration.database = folder + "/data/siwa.sqlite3"
            self.folder = folder
        case .postgres:
            configuration.database = try await PostgresCluster.shared().makeMigratedDatabase()
            configuration.dataKey = Self.postgresDataKey
            folder = nil
        }
        // The simulator signs by the held clock too: its tokens are as old as the application
        // thinks, however long the test waited for its database before they were asked for.
        var simulatorConfiguration = SimulatorConfiguration.testing()
        if let clock { simulatorConfiguration.clock = clock.read }
        simulator = try AppleIDSimulator(configuration: simulatorConfiguration)
        try simulator.start()
        configuration.listen = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.threads = 2
        configuration.logFormat = .json
        configuration.appleBaseURL = simulator.baseURL
        // The simulator's developer key stands in for the team's Sign in with Apple key.
        configuration.teamID = simulator.teamID
        configuration.keyID = simulator.keyID
        configuration.privateKeyPEM = simulator.developerKeyPEM
        configure(&configuration)
        let lines = LinesCollector()
        self.lines = lines
        let sink = LogSink(drainsInBackground: drainsInBackground, writer: { bytes in lines.append(bytes) })
        self.sink = sink
        do {
            application = try Application(
                configuration: configuration, logger: Logger(label: "siwa") { JSONLogHandler(label: $0, level: .info, sink: sink) },
                accessLogSink: sink, clocks: clock?.clocks ?? .system)
        } catch {
            await simulator.stop()
            if let folder { try? FileManager.default.removeItem(atPath: folder) }
            throw error
        }
        do {
            try application.start()
        } catch {
            application.store.close()
            await simulator.stop()
            if let folder { try? FileManager.default.removeItem(atPath: folder) }
            throw error
        }
    }

    public var configuration: Configuration { application.configuration }
    /// Whether this application took a slot of its own (false inside another's scope).
    public var holdsSlot: Bool { slot != nil }
    public var port: UInt16 { application.port }
    /// The application's own store: tests seed and inspect rows through it, on either engine.
    public var store: Store { application.store }
    /// SQL on that store, for what no Store call reads or writes.
    public var sql: StoreSQL { StoreSQL(store) }

    /// One request, through the responder (`.inProcess`) or over a fresh connection (`.socket`).
    public func send(
        _ method: HTTPMethod, _ target: String, bearer: String? = nil, headers: [(String, String)] = [], body: String = "",
        via: Transport? = nil
    ) async throws -> Reply {
        var fields = headers
        if let bearer { fields.append(("Authorization", "Bearer \(bearer)")) }
        switch via ?? transport {
        case .inProcess:
            var requestHeaders = HTTPHeaders()
            for (name, value) in fields { requestHeaders.add(name, value) }
            // As a connection does: the immediate answer first, else the handler's.
            let request = HTTPRequest(method, target, headers: requestHeaders, body: Array(body.utf8))
            let responder = application.responder
            let response: HTTPResponse
            if let immediate = responder.respondImmediately(to: request) {
                response = immediate
            } else {
                response = await responder.respond(to: request)
            }
            let fields = response.headers.map { (name: $0.0, value: $0.1) }
            return Reply(status: response.status, fields: fields, body: String(decoding: response.body, as: UTF8.self))
        case .socket:
            var request = "\(method.rawValue) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
            for (name, value) in fields { request += "\(name): \(value)\r\n" }
            let text = try await HTTPGet.raw(port: port, request + "\r\n" + body)
            guard let split = text.range(of: "\r\n\r\n") else { throw HTTPGet.Failure.malformed }
            var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw HTTPGet.Failure.malformed }
            let fields = lines.compactMap { line -> (name: String, value: String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            return Reply(status: status, fields: fields, body: String(text[split.upperBound...]))
        }
    }

    /// A GET (or `method`) without a body, its headers as a dictionary.
    public func get(_ target: String, method: HTTPMethod = .get, headers: [String: String] = [:], via: Transport? = nil) async throws -> Reply {
        try await send(method, target, headers: headers.map { ($0.key, $0.value) }, via: via)
    }

    /// Waits until `/readyz` answers 200 (Apple's keys load in the background); the last answer.
    @discardableResult
    public func waitUntilReady() async throws -> Reply {
        var last = try await send(.get, "/readyz")
        _ = try await eventually(within: .seconds(60)) {
            last = try await send(.get, "/readyz")
            return last.status == 200
        }
        return last
    }

    /// A user with one session, made as a sign-in would make it, at `now` (the held clock's
    /// time, else the wall's); the session's token.
    public func session(sub: String, now: Int64? = nil, ttl: Int64 = 30 * 86_400) async throws -> String {
        let now = now ?? clock?.now ?? Int64(time(nil))
        return try await store.write { connection in
            let (user, _) = try UserStore.upsertOnSignIn(
                in: connection, identity: VerifiedIdentity(appleSub: sub, email: nil, emailVerified: false, isPrivateEmail: false),
                profile: nil, now: now)
            return try SessionStore.create(in: connection, userID: user.id, deviceName: nil, now: now, ttl: ttl).token
        }
    }

    /// Stops the application alone (its database stays, for a test that opens it again); once.
    public func stopApplication() async {
        if Self.firstTime(applicationStopped) { await application.stop() }
    }

    /// Stops the application, then the simulator, and removes the database; a second call
    /// does nothing (a fixture that stops early is still stopped again at scope exit).
    public func stop() async {
        guard Self.firstTime(stopped) else { return }
        await stopApplication()
        await simulator.stop()
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
        slot?.release()
    }

    private static func firstTime(_ flag: borrowing Mutex<Bool>) -> Bool {
        flag.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
