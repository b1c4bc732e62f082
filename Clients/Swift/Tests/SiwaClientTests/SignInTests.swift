import Foundation
import SiwaClient
import Testing

/// Sign in with Apple against the real server, with the simulator playing Apple and the phone.
@Suite struct SignInTests {
    @Test func signInKeepsTheSessionAndTheNameAppleGaveOnce() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let sub = TestServer.newSub()
        let nonce = AppleNonce()
        let credential = try await server.credential(
            sub: sub, nonce: nonce, fullName: PersonName(given: "Ada", family: "Lovelace"), email: "ada@example.com")

        let result = try await client.signIn(with: credential, nonce: nonce.raw)

        #expect(result.created)
        #expect(result.user.appleSub == sub)
        #expect(result.user.name == PersonName(given: "Ada", family: "Lovelace"))
        let stored = try #require(try await client.session)
        #expect(stored.token == result.session.token)
        #expect(stored.userID == result.user.id)
        #expect(stored.appleUserID == sub)
        #expect(try await client.pendingProfile == nil)
        #expect(try await client.me() == result.user)
        let sessions = try await client.sessions()
        #expect(sessions.count == 1)
        #expect(sessions.first?.current == true)
        #expect(sessions.first?.deviceName == "Test iPhone")

        // The next authorization carries no name (Apple gives it once): the account keeps it.
        let second = try await server.signIn(client, sub: sub)
        #expect(!second.created)
        #expect(second.user.id == result.user.id)
        #expect(second.user.name == PersonName(given: "Ada", family: "Lovelace"))
    }

    @Test func aServerNonceWorksLikeADeviceNonce() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let issued = try await client.serverNonce()
        let nonce = AppleNonce(raw: issued.nonce)
        let result = try await client.signIn(with: try await server.credential(sub: TestServer.newSub(), nonce: nonce), nonce: nonce.raw)
        #expect(result.created)
        // A server nonce is single use: the same nonce again is refused, with the server's code.
        let replay = try await server.credential(sub: TestServer.newSub(), nonce: nonce)
        let error = await #expect(throws: SiwaError.self) { try await client.signIn(with: replay, nonce: nonce.raw) }
        #expect(error?.code == .invalidToken)
    }

    @Test func signOutEndsTheSessionOnTheServer() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let result = try await server.signIn(client)
        #expect(try await server.status("GET", "api/me", token: result.session.token) == 200)

        try await client.signOut()

        #expect(try await client.session == nil)
        #expect(try await server.status("GET", "api/me", token: result.session.token) == 401)
        await #expect(throws: SiwaError.notSignedIn) { try await client.me() }
        // Signing out twice is not an error.
        try await client.signOut()
    }

    @Test func signingOutOfflineForgetsTheSessionAndSaysTheServerWasNotReached() async throws {
        let server = try await TestServer.shared.value
        let store = MemorySessionStore()
        let nonce = AppleNonce()
        let signedIn = try await server.client(store: store)
            .signIn(with: try await server.credential(sub: TestServer.newSub(), nonce: nonce), nonce: nonce.raw)
        let offline = SiwaClient(baseURL: URL(string: "http://127.0.0.1:\(try unusedPort())")!, store: store)

        let error = await #expect(throws: SiwaError.self) { try await offline.signOut() }

        #expect(error.map { if case .transport = $0 { true } else { false } } == true)
        #expect(await store.load().session == nil)
        // The server still holds it until it expires, as the error says.
        #expect(try await server.status("GET", "api/me", token: signedIn.session.token) == 200)
    }
}
