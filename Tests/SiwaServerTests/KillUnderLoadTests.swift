import AppleSimulator
import Foundation
import JOSE
import JSON
import SQLite
import Synchronization
import Testing
import TestSupport
import WireFormat

/// docs/RELIABILITY.md: a 2xx means committed, and a `kill -9` at any moment leaves a database that opens.
/// The real binary takes sign-ins and notifications from four clients at once and is killed
/// mid-stream; after a restart every session that was answered 200 still authenticates, every
/// notification answered 200 is in the ledger, and the database passes integrity_check.
@Suite struct KillUnderLoadTests {
    struct Acknowledged {
        var sessions: [String] = []
        var notifications: [String] = []
    }

    /// Shared by the client tasks and the one that kills.
    final class Progress: Sendable {
        let acknowledged = Mutex(Acknowledged())
        let killed = Atomic<Bool>(false)
    }

    @Test func everyAcknowledgedWriteSurvivesKillNine() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/siwa.sqlite3"
        let environment = ServerProcess.environment(simulator: simulator, database: database)
        let first = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await first.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)

        // Bodies made ahead: unique tokens and notification ids, so every 200 is a new write.
        var work: [(kind: String, body: String, key: String)] = []
        for index in 0..<1_200 {
            let sub = "000500.\(String(repeating: "0", count: 29))\(100 + index % 150).0500"
            let nonce = "n-\(index)"
            let issued = try simulator.issueCode(sub: sub, clientID: "com.example.app", nonce: nonce)
            work.append(("sign-in", JSONWriter.string(.object(JSONObject([("identity_token", .string(issued.identityToken)), ("nonce", .string(nonce))]))), ""))
            if index >= 150 {
                let payload = try simulator.notificationPayload(NotificationEvent(type: index % 2 == 0 ? "email-disabled" : "email-enabled", sub: sub))
                let claims = try JSONParser.parse(Base64.url.decode(String(payload.split(separator: ".")[1])) ?? [])
                let jti = try #require(claims.object?["jti"]?.string)
                work.append(("notification", JSONWriter.string(.object(JSONObject([("payload", .string(payload))]))), jti))
            }
        }

        let progress = Progress()
        let items = work
        let workers = 4
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    for item in stride(from: worker, to: items.count, by: workers).map({ items[$0] }) where !progress.killed.load(ordering: .relaxed) {
                        let path = item.kind == "sign-in" ? "/api/auth/apple" : "/apple/notifications"
                        let request = "POST \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(item.body.utf8.count)\r\n\r\n\(item.body)"
                        guard let reply = try? await HTTPRequest.send(port: port, request), reply.hasPrefix("HTTP/1.1 200") else { continue }
                        let body = reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()
                        let enough = progress.acknowledged.withLock { acknowledged -> Bool in
                            if item.kind == "sign-in" {
                                if let token = (try? JSONParser.parse(body))?.object?["session"]?.object?["token"]?.string {
                                    acknowledged.sessions.append(token)
                                }
                            } else {
                                acknowledged.notifications.append(item.key)
                            }
                            return acknowledged.sessions.count >= 100 && acknowledged.notifications.count >= 100
                        }
                        // Mid-stream: the client whose answer makes 100 of each kind kills the
                        // server while the others' requests are in flight.
                        if enough, progress.killed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
                            first.signal(SIGKILL)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await first.wait(seconds: 30) == 128 + SIGKILL)
        let done = progress.acknowledged.withLock { $0 }
        #expect(done.sessions.count + done.notifications.count < work.count, "the kill came before the work ran out")

        let second = try ServerProcess(["serve"], environment: environment, folder: folder)
        let restartedPort = try #require(await second.waitForPort())
        try await ServerProcess.waitUntilReady(port: restartedPort)
        var lostSessions = 0
        for token in done.sessions {
            let reply = try await HTTPRequest.send(port: restartedPort, "GET /api/me HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(token)\r\n\r\n")
            if !reply.hasPrefix("HTTP/1.1 200") { lostSessions += 1 }
        }
        #expect(lostSessions == 0, "\(lostSessions) of \(done.sessions.count) acknowledged sessions were lost")
        second.signal(SIGTERM)
        #expect(await second.wait(seconds: 30) == 0)

        let store = try Database(path: database, readers: 1)
        defer { store.close() }
        let integrity = try store.read { try $0.queryOne("PRAGMA integrity_check")?.string(0) }
        #expect(integrity == "ok")
        let lostNotifications = try store.read { connection in
            try done.notifications.filter { try connection.queryOne("SELECT 1 FROM notifications WHERE jti = ?", [.text($0)]) == nil }.count
        }
        #expect(lostNotifications == 0, "\(lostNotifications) of \(done.notifications.count) acknowledged notifications were lost")
        await simulator.stop()
    }
}
