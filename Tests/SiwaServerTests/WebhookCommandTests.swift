import AppleSimulator
import Foundation
import Synchronization
import Testing
import TestSupport

/// The real binary delivering webhooks (docs/guides/connecting-your-backend.md): `webhooks failed` and `webhooks retry` on the
/// configured database of either engine while the server runs, and an event committed but not
/// yet delivered when the process is killed with SIGKILL, delivered by the next one.
@Suite(.timeLimit(.minutes(2)))
struct WebhookCommandTests {
    typealias Engine = DatabaseEngine

    /// A receiver that refuses (503) until told to accept.
    final class Switch: Sendable {
        let accepting = Atomic<Bool>(false)
    }

    static func metric(_ port: UInt16, _ line: String) async throws -> Bool {
        for _ in 0..<1500 {
            if try await HTTPRequest.get(port: port, path: "/metrics").contains(line) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test(arguments: Engine.available)
    func failedEventsAreListedAndQueuedAgainByIdOrAll(_ engine: Engine) async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let gate = Switch()
        let receiver = try WebhookReceiver { _, _ in gate.accepting.load(ordering: .relaxed) ? .status(200) : .status(503) }
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = [
            "SIWA_WEBHOOK_URL": receiver.url, "SIWA_WEBHOOK_SECRET": receiver.secret, "SIWA_WEBHOOK_BACKOFF": "1",
            "SIWA_WEBHOOK_RETENTION": "1",
        ]
        if engine == .postgres {
            settings["SIWA_DATABASE"] = try await PostgresCluster.shared().makeDatabase()
            settings["SIWA_DATA_KEY"] = Data(repeating: 9, count: 32).base64EncodedString()
        }
        let environment = ServerProcess.environment(simulator: simulator, settings)
        let server = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)

        var users: [String] = []
        for index in 0..<2 {
            let reply = try await ServerProcess.signIn(
                port: port, simulator: simulator, sub: "000910.0000000000000000000000000000091\(index).0910", nonce: "n\(index)")
            users.append(try #require(reply.json?["user"]?.object?["id"]?.string))
        }
        // Refused, then past webhook_retention (1 s): failed.
        #expect(try await Self.metric(port, #"siwa_webhook_deliveries_total{type="user.created",outcome="failed"} 2"#))
        // Each sign-in's session.created follows its user.created, and fails the same way.
        #expect(try await Self.metric(port, #"siwa_webhook_deliveries_total{type="session.created",outcome="failed"} 2"#))
        let ids = Array(Set(receiver.deliveries.filter { $0.type == "user.created" }.map(\.id)))
        #expect(ids.count == 2)
        func command(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await ServerProcess.run(["webhooks"] + arguments, environment: environment, folder: folder)
        }

        let listed = try await command(["failed"])
        #expect(listed.status == 0, "\(listed.stderr)")
        for id in ids { #expect(listed.stdout.contains(id)) }
        for user in users { #expect(listed.stdout.contains(user)) }
        #expect(listed.stdout.hasPrefix("ID "))
        #expect(listed.stdout.contains("user.created") && listed.stdout.contains("HTTP 503"))
        #expect(listed.stdout.contains("4 failed event(s)"))
        #expect(!listed.stdout.contains(receiver.secret.dropFirst(6)))

        let unknown = try await command(["retry", "msg_unknown"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no failed webhook event has the id msg_unknown"))
        #expect(try await command(["retry"]).status == 64)
        #expect(try await command(["retry", ids[0], "--all"]).status == 64)

        // The receiver is back: one queued by id, then the rest with --all.
        gate.accepting.store(true, ordering: .relaxed)
        let one = try await command(["retry", ids[0]])
        #expect(one.status == 0)
        #expect(one.stdout.contains("queued \(ids[0]) again"))
        #expect(await receiver.wait { $0.contains { $0.id == ids[0] && $0.accepted } })
        let rest = try await command(["failed"])
        #expect(!rest.stdout.contains(ids[0]) && rest.stdout.contains(ids[1]))
        let all = try await command(["retry", "--all"])
        #expect(all.status == 0)
        #expect(all.stdout.contains("queued 3 failed event(s) again"))
        #expect(await receiver.wait { $0.contains { $0.id == ids[1] && $0.accepted } })
        #expect(try await command(["failed"]).stdout.contains("no failed webhook events"))
        #expect(try await command(["retry", "--all"]).stdout.contains("queued 0 failed event(s) again"))
        #expect(receiver.deliveries.allSatisfy { $0.signatureVerifies })

        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        receiver.stop()
        await simulator.stop()
    }

    @Test func theCommandsReadTheConfigurationFileAndRefuseADatabaseThatIsNotThere() async throws {
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try #"{"database": "data/siwa.sqlite3"}"#.write(toFile: folder + "/siwa.json", atomically: true, encoding: .utf8)
        let missing = try await ServerProcess.run(["webhooks", "failed", "--config", "siwa.json"], folder: folder)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("database: no database at data/siwa.sqlite3"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/data/siwa.sqlite3"), "no database is created by a typo")

        #expect(try await ServerProcess.run(["migrate", "--config", "siwa.json"], folder: folder).status == 0)
        let empty = try await ServerProcess.run(["webhooks", "failed", "--config", "siwa.json"], folder: folder)
        #expect(empty.status == 0)
        #expect(empty.stdout == "no failed webhook events\n")
        let none = try await ServerProcess.run(["webhooks", "retry", "--all", "--config", "siwa.json"], folder: folder)
        #expect(none.status == 0)
        #expect(none.stdout.contains("queued 0 failed event(s) again"))
        #expect(none.stdout.contains("webhook_url is not set"))
        #expect(try await ServerProcess.run(["webhooks", "failed", "--config", "nope.json"], folder: folder).status == 2)
    }

    /// docs/RELIABILITY.md: a kill -9 at any moment loses nothing committed. Here the event's change has
    /// committed and its first attempt was refused; the process dies during the back-off, and
    /// the next one, on the same database, delivers that very event.
    @Test func anEventCommittedButNotDeliveredBeforeKillNineIsDeliveredAfterARestart() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let gate = Switch()
        let receiver = try WebhookReceiver { _, _ in gate.accepting.load(ordering: .relaxed) ? .status(200) : .status(503) }
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ServerProcess.environment(simulator: simulator, [
            "SIWA_WEBHOOK_URL": receiver.url, "SIWA_WEBHOOK_SECRET": receiver.secret, "SIWA_WEBHOOK_BACKOFF": "2",
        ])
        let first = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await first.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        let reply = try await ServerProcess.signIn(port: port, simulator: simulator, sub: "000911.00000000000000000000000000000911.0911", nonce: "n")
        #expect(reply.status == 200)
        // At least one refused attempt (under load a second may come before the poll sees the first).
        #expect(try await Self.metric(port, #"siwa_webhook_deliveries_total{type="user.created",outcome="retry"} "#))
        first.signal(SIGKILL)
        _ = await first.wait(seconds: 30)
        let refused = try #require(receiver.deliveries.first)
        #expect(!refused.accepted)

        gate.accepting.store(true, ordering: .relaxed)
        let second = try ServerProcess(["serve"], environment: environment, folder: folder)
        let restarted = try #require(await second.waitForPort())
        #expect(await receiver.wait { $0.contains { $0.accepted } })
        let delivered = try #require(receiver.deliveries.first { $0.accepted })
        #expect(delivered.id == refused.id && delivered.body == refused.body)
        #expect(delivered.signatureVerifies)
        #expect(try await Self.metric(restarted, "siwa_webhook_queue_depth 0"))
        second.signal(SIGTERM)
        #expect(await second.wait(seconds: 30) == 0)
        receiver.stop()
        await simulator.stop()
    }
}
