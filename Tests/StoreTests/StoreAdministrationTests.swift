import Foundation
import OpenSSLCrypto
@testable import Store
import Testing
import TestSupport

/// The operators' Store operations (docs/guides/connecting-your-backend.md): ending every session of a user, and deleting
/// one, end cached sessions at once; unknown users change nothing. Both engines.
@Suite(.timeLimit(.minutes(2)))
struct StoreAdministrationTests {

    @Test(arguments: Engine.available)
    func endingEverySessionOfAUserIsRefusedAtOnceEvenWhenCached(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let first = try await BothEnginesTests.signIn(store, sub: "sub-a", token: "t-1")
            let second = try await BothEnginesTests.signIn(store, sub: "sub-a", token: "t-2")
            let bystander = try await BothEnginesTests.signIn(store, sub: "sub-b", token: "t-3")
            // Authenticated twice: held in this process's cache.
            for _ in 0..<2 { #expect(try await store.sessions.authenticate(token: first.session.token, now: 1_001, idleTTL: 3_600) != nil) }

            #expect(try await store.endSessions(userID: first.user.id, now: 1_001) == 2)
            #expect(try await store.sessions.authenticate(token: first.session.token, now: 1_001, idleTTL: 3_600) == nil)
            #expect(try await store.sessions.authenticate(token: second.session.token, now: 1_001, idleTTL: 3_600) == nil)
            #expect(try await store.sessions.authenticate(token: bystander.session.token, now: 1_001, idleTTL: 3_600) != nil)
            // The user stays; a user without sessions has none to end.
            #expect(try await store.users.user(id: first.user.id) != nil)
            #expect(try await store.endSessions(userID: first.user.id, now: 1_001) == 0)
            #expect(try await store.endSessions(userID: "usr_unknown", now: 1_001) == nil)
        }
    }

    @Test(arguments: Engine.available)
    func deletingAnUnknownUserIsNilAndEmitsNothing(_ engine: Engine) async throws {
        try await WebhookOutboxTests.withStore(engine) { store in
            #expect(try await store.deleteUser(userID: "usr_unknown", reason: .admin, now: 100, firstAttemptAt: 100) == nil)
            #expect(try await WebhookOutboxTests.events(store).isEmpty)
            let signedIn = try await WebhookOutboxTests.signIn(store, sub: "s", token: "t", now: 100)
            for _ in 0..<2 { #expect(try await store.sessions.authenticate(token: signedIn.session.token, now: 101, idleTTL: 3_600) != nil) }
            let deletion = try #require(try await store.deleteUser(userID: signedIn.user.id, reason: .admin, now: 200, firstAttemptAt: 200))
            #expect(deletion.user.appleSub == "s")
            #expect(deletion.revocation == nil)
            #expect(try await store.sessions.authenticate(token: signedIn.session.token, now: 201, idleTTL: 3_600) == nil)
            #expect(try await WebhookOutboxTests.events(store).last == "user.deleted \(signedIn.user.id) admin @200")
        }
    }

    /// The command line is another process on the same SQLite file: its commits are not seen
    /// by the server's update hook, so the server's writer notices them by `data_version` (at
    /// its next check, a quarter of a second on an idle machine: SQLiteTests wait for the check
    /// itself) and its session cache refuses what they ended.
    @Test func anotherProcessEndingSessionsOnSQLiteIsSeen() async throws {
        try await withTemporaryFolder { folder in
            let key = testDataKey
            let server = try Store.open(folder + "/siwa.sqlite3", connections: 2) { key }
            defer { server.close() }
            let signedIn = try await BothEnginesTests.signIn(server, sub: "sub-c", token: "t-c")
            for _ in 0..<2 { #expect(try await server.sessions.authenticate(token: signedIn.session.token, now: 1_001, idleTTL: 3_600) != nil) }
            #expect(server.sessions.cachedCount == 1)

            let commandLine = try Store.open(folder + "/siwa.sqlite3", connections: 1) { key }
            #expect(try await commandLine.endSessions(userID: signedIn.user.id, now: 1_001) == 1)
            commandLine.close()

            let refused = try await eventually {
                try await server.sessions.authenticate(token: signedIn.session.token, now: 1_002, idleTTL: 3_600) == nil
            }
            #expect(refused, "the server's cache still serves a session another process ended")
        }
    }
}
