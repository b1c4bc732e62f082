import Foundation
@testable import Store
import Testing
import TestSupport

/// The webhook queue's rules (docs/guides/connecting-your-backend.md) with explicit times, on both engines: a user's events
/// one at a time in order while other users' go on, leases that keep workers apart, back-off
/// within the retention and failure after it, and the operators' requeue.
@Suite(.timeLimit(.minutes(2)))
struct WebhookQueueTests {
    typealias Engine = DatabaseEngine

    /// A user with one `user.created` event at `now`; returns the user id.
    static func user(_ store: Store, _ name: String, now: Int64) async throws -> String {
        try await WebhookOutboxTests.signIn(store, sub: name, token: "token-\(name)", now: now).user.id
    }

    /// One `user.updated` event for `userID` at `now`.
    static func update(_ store: Store, _ userID: String, now: Int64) async throws {
        _ = try await store.setExternalID(userID: userID, externalID: "ext-\(userID)-\(now)", now: now)
    }

    @Test(arguments: Engine.available)
    func onlyEachUsersOldestEventIsClaimedAndOtherUsersDoNotWait(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            let ada = try await Self.user(store, "ada", now: 100)
            try await Self.update(store, ada, now: 101)
            try await Self.update(store, ada, now: 102)
            let bob = try await Self.user(store, "bob", now: 103)
            let queue = store.webhooks

            let first = try await queue.claimDue(now: 200, lease: 30, limit: 10)
            #expect(first.map(\.userID) == [ada, bob])
            #expect(first.map(\.type) == ["user.created", "user.created"])
            #expect(first.allSatisfy { $0.attempts == 0 })
            #expect(first[0].body.hasPrefix("user.created \(ada)"))
            // Ada's next event waits behind the one in flight, leased or not.
            #expect(try await queue.claimDue(now: 200, lease: 30, limit: 10).isEmpty)
            #expect(try await queue.claimDue(now: 300, lease: 30, limit: 10).map(\.id) == first.map(\.id), "leases ran out: taken again")

            try await queue.markDelivered(id: first[0].id)
            let second = try await queue.claimDue(now: 400, lease: 30, limit: 10)
            #expect(second.count == 2)
            let adaSecond = try #require(second.first { $0.userID == ada })
            #expect(adaSecond.createdAt == 101 && adaSecond.type == "user.updated")

            // A retry keeps Ada's third event waiting until the second is delivered.
            #expect(try await queue.recordFailure(adaSecond, error: "HTTP 500", now: 400, retryDelay: 5, retention: 10_000) == .retrying(at: 405))
            try await queue.markDelivered(id: try #require(second.first { $0.userID == bob }).id)
            #expect(try await queue.hasDue(now: 404) == false, "Ada's third event is due but waits behind her second")
            #expect(try await queue.hasDue(now: 405))
            #expect(try await queue.claimDue(now: 404, lease: 30, limit: 10).allSatisfy { $0.userID != ada })
            let retried = try await queue.claimDue(now: 405, lease: 30, limit: 10).filter { $0.userID == ada }
            #expect(retried.map(\.id) == [adaSecond.id])
            #expect(retried.first?.attempts == 1)
            try await queue.markDelivered(id: adaSecond.id)
            #expect(try await queue.claimDue(now: 406, lease: 30, limit: 10).first { $0.userID == ada }?.createdAt == 102)
        }
    }

    @Test(arguments: Engine.available)
    func aLeasedEventIsNotDueUntilItsLeasePasses(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            _ = try await Self.user(store, "cy", now: 100)
            let queue = store.webhooks
            #expect(try await queue.hasDue(now: 99) == false)
            #expect(try await queue.hasDue(now: 100))
            let claimed = try await queue.claimDue(now: 100, lease: 30, limit: 1)
            #expect(claimed.count == 1)
            #expect(try await queue.hasDue(now: 129) == false)
            #expect(try await queue.claimDue(now: 129, lease: 30, limit: 1).isEmpty)
            #expect(try await queue.claimDue(now: 130, lease: 30, limit: 1) == claimed)
        }
    }

    @Test(arguments: Engine.available)
    func concurrentClaimsTakeDisjointEventsAndOneEventPerUser(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            var users: [String] = []
            for index in 0..<30 {
                let id = try await Self.user(store, "user\(index)", now: 100)
                try await Self.update(store, id, now: 101)
                users.append(id)
            }
            let queue = store.webhooks
            let claims = try await withThrowingTaskGroup(of: [WebhookEvent].self) { group in
                for _ in 0..<8 { group.addTask { try await queue.claimDue(now: 200, lease: 60, limit: 6) } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(Set(claims.map(\.id)).count == claims.count, "no event taken twice")
            #expect(Set(claims.map(\.userID)).count == claims.count, "no two events of one user at once")
            #expect(claims.allSatisfy { $0.type == "user.created" })
            #expect(claims.count == 30, "all 8 × 6 places could hold the 30 users' first events: \(claims.count)")
        }
    }

    @Test(arguments: Engine.available)
    func failuresBackOffWithinTheRetentionThenFailAndNoLongerHoldTheUserBack(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            let dee = try await Self.user(store, "dee", now: 100)
            try await Self.update(store, dee, now: 150)
            let queue = store.webhooks
            let event = try #require(try await queue.claimDue(now: 200, lease: 30, limit: 5).first)
            #expect(try await queue.recordFailure(event, error: "HTTP 503", now: 200, retryDelay: 50, retention: 1_000) == .retrying(at: 250))
            // The last retry is put at the end of the retention, not after it.
            #expect(try await queue.recordFailure(event, error: "timed out", now: 900, retryDelay: 800, retention: 1_000) == .retrying(at: 1_100))
            let long = String(repeating: "x", count: 500)
            #expect(try await queue.recordFailure(event, error: "connect failed: " + long, now: 1_100, retryDelay: 800, retention: 1_000) == .failed)

            let failed = try await queue.failed()
            #expect(failed.count == 1)
            let entry = try #require(failed.first)
            #expect(entry.id == event.id && entry.type == "user.created" && entry.userID == dee)
            #expect(entry.attempts == 3 && entry.createdAt == 100 && entry.failedAt == 1_100)
            #expect(entry.lastError?.hasPrefix("connect failed: xxx") == true)
            #expect(entry.lastError?.count == 200)

            // Failed, it no longer blocks Dee's next event, and is not counted as waiting.
            #expect(try await queue.claimDue(now: 1_100, lease: 30, limit: 5).map(\.createdAt) == [150])
            let depth = try await queue.depth()
            #expect(depth.count == 1 && depth.oldestCreatedAt == 150)
        }
    }

    @Test(arguments: Engine.available)
    func failedEventsAreQueuedAgainByIdOrAllAtOnce(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            let eve = try await Self.user(store, "eve", now: 100)
            let fay = try await Self.user(store, "fay", now: 100)
            let queue = store.webhooks
            for event in try await queue.claimDue(now: 100, lease: 30, limit: 5) {
                #expect(try await queue.recordFailure(event, error: "HTTP 404", now: 200, retryDelay: 5, retention: 50) == .failed)
            }
            try await Self.update(store, eve, now: 300)
            #expect(try await queue.failed().map(\.userID) == [eve, fay])
            let failedEve = try #require(try await queue.failed().first)

            #expect(try await queue.requeue(id: failedEve.id, now: 400))
            #expect(try await queue.requeue(id: failedEve.id, now: 400) == false, "no longer failed")
            #expect(try await queue.requeue(id: "msg_unknown", now: 400) == false)
            #expect(try await queue.failed().map(\.userID) == [fay])
            // Requeued, Eve's older event goes before her later one again.
            let again = try await queue.claimDue(now: 400, lease: 30, limit: 5)
            #expect(again.map(\.id) == [failedEve.id])
            #expect(again.first?.attempts == 0)
            // Still older than its retention: one more attempt, then failed again.
            #expect(try await queue.recordFailure(try #require(again.first), error: "HTTP 500", now: 401, retryDelay: 5, retention: 50) == .failed)

            #expect(try await queue.requeueAll(now: 500) == 2)
            #expect(try await queue.failed().isEmpty)
            #expect(Set(try await queue.claimDue(now: 500, lease: 30, limit: 5).map(\.userID)) == [eve, fay])
            #expect(try await queue.requeueAll(now: 600) == 0)
        }
    }

    @Test(arguments: Engine.available)
    func depthCountsEventsWaitingAndTheOldest(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            let queue = store.webhooks
            #expect(try await queue.depth().count == 0)
            #expect(try await queue.depth().oldestCreatedAt == nil)
            let gus = try await Self.user(store, "gus", now: 100)
            try await Self.update(store, gus, now: 120)
            _ = try await Self.user(store, "hal", now: 110)
            #expect(try await queue.depth().count == 3)
            #expect(try await queue.depth().oldestCreatedAt == 100)
            let first = try #require(try await queue.claimDue(now: 130, lease: 30, limit: 5).first { $0.userID == gus })
            try await queue.markDelivered(id: first.id)
            #expect(try await queue.depth().count == 2)
            #expect(try await queue.depth().oldestCreatedAt == 110)
        }
    }

    @Test(arguments: Engine.available)
    func theCommandsOpenTheQueueOfAnExistingDatabaseOnly(_ engine: Engine) async throws {
        let key = [UInt8](repeating: 0x42, count: 32)
        let location: String
        var folder: String?
        switch engine {
        case .sqlite:
            let made = NSTemporaryDirectory() + "webhook-queue-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
            folder = made
            location = made + "/siwa.sqlite3"
            // A path with no database is refused, and no file appears.
            await #expect(throws: MissingDatabase.self) { try await WebhookQueue.withQueue(at: made + "/typo.sqlite3") { _ in } }
            #expect(!FileManager.default.fileExists(atPath: made + "/typo.sqlite3"))
        case .postgres:
            location = try await PostgresCluster.shared().makeDatabase()
        }
        defer { if let folder { try? FileManager.default.removeItem(atPath: folder) } }
        let store = try Store.open(location, connections: 2, events: WebhookOutboxTests.renderer) { key }
        let ivy = try await Self.user(store, "ivy", now: 100)
        let event = try #require(try await store.webhooks.claimDue(now: 100, lease: 30, limit: 1).first)
        try await store.webhooks.recordFailure(event, error: "HTTP 410", now: 500, retryDelay: 5, retention: 100)

        // While the server runs, as the commands would.
        let listed = try await WebhookQueue.withQueue(at: location) { try await $0.failed() }
        #expect(listed.map(\.userID) == [ivy])
        #expect(try await WebhookQueue.withQueue(at: location) { try await $0.requeueAll(now: 600) } == 1)
        #expect(try await store.webhooks.claimDue(now: 600, lease: 30, limit: 1).map(\.id) == [event.id])
        store.close()
    }
}
