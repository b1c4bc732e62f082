import Foundation
import SiwaClient
import Testing

/// Apple's credential state, checked at launch and on Apple's revocation notification.
@Suite struct CredentialStateTests {
    @Test func aRevokedCredentialSignsOutOnTheServerToo() async throws {
        let server = try await TestServer.shared.value
        let provider = StubCredentialStateProvider()
        let store = MemorySessionStore()
        let client = server.client(store: store, provider: provider)
        let sub = TestServer.newSub()
        let signedIn = try await server.signIn(client, sub: sub)

        provider.set(.authorized, for: sub)
        #expect(try await client.checkCredentialState() == .authorized)
        #expect(try await client.session?.token == signedIn.session.token)
        #expect(try await server.status("GET", "api/me", token: signedIn.session.token) == 200)

        provider.set(.revoked, for: sub)
        #expect(try await client.checkCredentialState() == .revoked)

        #expect(await store.load() == SiwaClientState())
        #expect(try await server.status("GET", "api/me", token: signedIn.session.token) == 401)
        #expect(provider.questions == [sub, sub])
        // Nothing left to ask about.
        #expect(try await client.checkCredentialState() == nil)
    }

    @Test func theRevocationNotificationEndsTheSession() async throws {
        let server = try await TestServer.shared.value
        let provider = StubCredentialStateProvider()
        let client = server.client(provider: provider)
        let watcher = client.watchCredentialRevocations()
        defer { watcher.cancel() }
        let sub = TestServer.newSub()
        let signedIn = try await server.signIn(client, sub: sub)

        provider.set(.notFound, for: sub)
        provider.postRevocation()

        let signedOut = try await eventually { try await client.isSignedIn ? nil : true }
        #expect(signedOut == true)
        #expect(try await server.status("GET", "api/me", token: signedIn.session.token) == 401)
    }

    @Test func aPasswordUserHasNoAppleCredentialToCheck() async throws {
        let server = try await TestServer.shared.value
        let provider = StubCredentialStateProvider()
        let client = server.client(provider: provider)
        try await client.signUp(email: "noapple-\(UUID().uuidString.prefix(8))@example.com", password: "correct horse battery")
        #expect(try await client.checkCredentialState() == nil)
        #expect(provider.questions.isEmpty)
        #expect(try await client.isSignedIn)
    }

    /// The other way round: Apple told the server first (consent-revoked), so the server ended
    /// the session; the client's next call learns it and forgets the session.
    @Test func aSessionTheServerEndedIsForgotten() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let signedIn = try await server.signIn(client)
        let other = server.client()
        try await server.signIn(other, sub: signedIn.user.appleSub!)
        let mine = try #require(try await client.sessions().first { $0.current })
        try await other.endSession(id: mine.id)

        let error = await #expect(throws: SiwaError.self) { try await client.me() }
        #expect(error?.code == .unauthenticated)
        #expect(try await client.session == nil)
        #expect(try await other.me().id == signedIn.user.id)
    }
}
