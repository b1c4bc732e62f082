import Foundation
import OpenSSLCrypto
@testable import Store
import Synchronization
import Testing

@Suite struct SessionStoreTests {
    /// Session ids lead with their creation second, so later ones sort later (their index grows
    /// at its end), and still carry 128 random bits: two made in the same second differ.
    @Test func sessionIDsSortByCreationAndStayRandom() {
        let early = RecordID.make(prefix: "ses_", orderedBy: 1_700_000_000)
        let sameSecond = RecordID.make(prefix: "ses_", orderedBy: 1_700_000_000)
        let later = RecordID.make(prefix: "ses_", orderedBy: 1_700_000_001)
        #expect(early.hasPrefix("ses_6553f100") && early.count == 4 + 8 + 32)
        #expect(early != sameSecond)
        #expect(early < later && sameSecond < later)
        #expect(RecordID.make(prefix: "ses_", orderedBy: -5).hasPrefix("ses_00000000"))
        #expect(RecordID.make(prefix: "ses_", orderedBy: .max).hasPrefix("ses_ffffffff"))
    }

    @Test(arguments: Engine.available)
    func storesOnlyTheTokensHash(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let session = try await store.uncachedSessions.create(userID: userID, deviceName: "Ada's iPhone", now: 1_000, ttl: 3_600)
            #expect(session.token.count == 43)
            #expect(session.record.id.hasPrefix("ses_"))
            #expect(session.record.expiresAt == 4_600 && session.record.deviceName == "Ada's iPhone")

            let row = try #require(try await store.engine.read { try $0.queryOne("SELECT * FROM sessions WHERE id = ?", [.text(session.record.id)]) })
            let stored = try row.blob("token_hash")
            #expect(stored.count == 32)
            #expect(stored != Array(session.token.utf8))
            // No column holds the token in any form.
            for index in 0..<row.count {
                if case .text(let text) = row[index] { #expect(!text.contains(session.token)) }
            }
            // The hash is of the token's 32 decoded bytes.
            let raw = try #require(decodeBase64URL(session.token))
            #expect(raw.count == 32 && stored == SHA256.hash(raw))
        }
    }

    @Test(arguments: Engine.available)
    func authenticateFindsTheSessionAndItsUser(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let (record, user) = try await #require(try sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600))
            #expect(record == session.record)
            #expect(user.id == userID)
            // As cut from an Authorization header, without a copy.
            let header = "Bearer " + session.token + "  "
            let cut = header.dropFirst(7).dropLast(2)
            #expect(try await sessions.live(token: cut, now: 1_001, idleTTL: 600)?.session == session.record)
        }
    }

    @Test(arguments: Engine.available)
    func authenticateRefusesUnknownExpiredAndIdleSessions(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)

            // Unknown: a well-formed token never issued, and text that is no token at all.
            let other = encodeBase64URL(SecureRandom.bytes(32))
            await #expect(try sessions.authenticate(token: other, now: 1_001, idleTTL: 600) == nil)
            await #expect(try sessions.authenticate(token: "", now: 1_001, idleTTL: 600) == nil)
            await #expect(try sessions.authenticate(token: session.token + "A", now: 1_001, idleTTL: 600) == nil)
            // 43 characters that are not base64url, or whose last one carries stray bits.
            await #expect(try sessions.authenticate(token: String(repeating: "!", count: 43), now: 1_001, idleTTL: 600) == nil)
            await #expect(try sessions.authenticate(token: String(session.token.dropLast()) + "B", now: 1_001, idleTTL: 600) == nil)

            // Idle: last seen at 1000, idle TTL 600.
            await #expect(try sessions.authenticate(token: session.token, now: 1_599, idleTTL: 600) != nil)
            await #expect(try sessions.authenticate(token: session.token, now: 1_600, idleTTL: 600) == nil)

            // Absolute expiry holds even for a session in constant use.
            await #expect(try sessions.authenticate(token: session.token, now: 4_599, idleTTL: 100_000) != nil)
            await #expect(try sessions.authenticate(token: session.token, now: 4_600, idleTTL: 100_000) == nil)
        }
    }

    @Test(arguments: Engine.available)
    func oneUserCannotEndAnothersSession(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let ada = try await makeUser(store, sub: "ada")
            let eve = try await makeUser(store, sub: "eve")
            let sessions = store.uncachedSessions
            let adas = try await sessions.create(userID: ada, deviceName: nil, now: 1_000, ttl: 3_600)

            #expect(try await sessions.end(id: adas.record.id, userID: eve) == false)
            await #expect(try sessions.authenticate(token: adas.token, now: 1_001, idleTTL: 600) != nil)
            #expect(try await sessions.end(id: adas.record.id, userID: ada))
            await #expect(try sessions.authenticate(token: adas.token, now: 1_001, idleTTL: 600) == nil)
            // Already ended, and unknown: both false (404).
            #expect(try await sessions.end(id: adas.record.id, userID: ada) == false)
            #expect(try await sessions.end(id: "ses_nope", userID: ada) == false)
        }
    }

    @Test(arguments: Engine.available)
    func listAndEndAllAreScopedToTheUser(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let ada = try await makeUser(store, sub: "ada")
            let eve = try await makeUser(store, sub: "eve")
            let sessions = store.uncachedSessions
            let first = try await sessions.create(userID: ada, deviceName: "a", now: 1_000, ttl: 3_600)
            let second = try await sessions.create(userID: ada, deviceName: "b", now: 1_100, ttl: 3_600)
            _ = try await sessions.create(userID: ada, deviceName: "short", now: 1_000, ttl: 10)
            let eves = try await sessions.create(userID: eve, deviceName: nil, now: 1_000, ttl: 3_600)

            await #expect(try sessions.list(userID: ada, now: 1_200).map(\.id) == [second.record.id, first.record.id])
            await #expect(try sessions.list(userID: ada, now: 1_200, idleTTL: 150).map(\.id) == [second.record.id])
            #expect(try await sessions.endAll(userID: ada) == 3)
            await #expect(try sessions.list(userID: ada, now: 1_200).isEmpty)
            await #expect(try sessions.authenticate(token: eves.token, now: 1_200, idleTTL: 600) != nil)
        }
    }

    @Test(arguments: Engine.available)
    func pruneDeletesOnlyExpiredSessions(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            _ = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 10)
            _ = try await sessions.create(userID: userID, deviceName: nil, now: 500, ttl: 3_600)
            let live = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            #expect(try await sessions.pruneExpired(now: 1_100, idleTTL: 300) == 2)
            await #expect(try sessions.list(userID: userID, now: 1_100).map(\.id) == [live.record.id])
        }
    }
}

/// Test-side base64url decoding, independent of the module's.
func decodeBase64URL(_ text: String) -> [UInt8]? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return Data(base64Encoded: base64).map(Array.init)
}

func encodeBase64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

@Suite struct SessionQueryPlanTests {
    /// Authentication runs on every request: it must be index lookups, never a scan: the session
    /// by its token hash, the user by its key, and whether the user has a password by its key
    /// (a correlated subquery). (SQLite's plan; PostgreSQL's planner may scan the tiny tables of
    /// a test, so its plan proves nothing.)
    @Test func authenticateUsesIndexesOnly() async throws {
        try await withStore(.sqlite) { store in
            let plan = try await store.engine.read { connection in
                try connection.query("EXPLAIN QUERY PLAN " + SessionStore.authenticateSQL, [.blob([0])])
                    .map { try $0.string("detail") }
            }
            let lookups = plan.filter { !$0.hasPrefix("CORRELATED") }
            #expect(lookups.count == 3, "\(plan)")
            #expect(lookups.allSatisfy { $0.hasPrefix("SEARCH") }, "\(plan)")
            #expect(plan.contains { $0.contains("token_hash") }, "\(plan)")
            #expect(plan.contains { $0.contains("password_credentials") || $0.contains("SEARCH p ") }, "\(plan)")
        }
    }
}

@Suite struct LiveSessionTests {
    /// The batcher is told once per session and second, however many requests use it.
    @Test func onlyTheFirstUseOfASecondCounts() async throws {
        try await withStore(.sqlite) { store in
            let userID = try await makeUser(store)
            let sessions = store.sessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let live = try #require(try await sessions.live(token: session.token[...], now: 1_001, idleTTL: 600))
            // The cache hands out the same object, so its memory of uses is shared.
            #expect(try await sessions.live(token: session.token[...], now: 1_001, idleTTL: 600) === live)
            let firsts = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<16 { group.addTask { live.isFirstUse(at: 1_001) } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(firsts == 1)
            #expect(!live.isFirstUse(at: 1_001))
            #expect(live.isFirstUse(at: 1_002))
            #expect(!live.isFirstUse(at: 1_002))
        }
    }

    /// `/api/me`'s body is written once per object and then shared by every request that finds
    /// it; the user never changes in one, since a change makes the cache hand out a new object.
    @Test func theUsersJSONIsWrittenOncePerObject() async throws {
        try await withStore(.sqlite) { store in
            let userID = try await makeUser(store)
            let session = try await store.sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let writes = Atomic(0)
            let write: (UserRecord) -> [UInt8] = { user in
                writes.add(1, ordering: .relaxed)
                return Array("\(user.id) \(user.locale)".utf8)
            }
            let live = try #require(try await store.sessions.live(token: session.token[...], now: 1_001, idleTTL: 600))
            #expect(live.userJSON(write) == Array("\(userID) en".utf8))
            let again = try #require(try await store.sessions.live(token: session.token[...], now: 1_001, idleTTL: 600))
            #expect(again === live && again.userJSON(write) == Array("\(userID) en".utf8))
            #expect(writes.load(ordering: .relaxed) == 1)

            _ = try await store.setLocale(userID: userID, locale: "ko", now: 1_002)
            let changed = try #require(try await store.sessions.live(token: session.token[...], now: 1_002, idleTTL: 600))
            #expect(changed !== live && changed.userJSON(write) == Array("\(userID) ko".utf8))
            #expect(writes.load(ordering: .relaxed) == 2)
        }
    }
}
