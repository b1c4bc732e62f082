import Foundation
import SiwaClient
import Testing

@Suite struct AccountTests {
    @Test func deletingTheAccountEndsEverySessionAndClearsTheStore() async throws {
        let server = try await TestServer.shared.value
        let store = MemorySessionStore()
        let client = server.client(store: store)
        let sub = TestServer.newSub()
        let nonce = AppleNonce()
        let signedIn = try await client.signIn(
            with: try await server.credential(sub: sub, nonce: nonce, fullName: PersonName(given: "Alan", family: "Turing")), nonce: nonce.raw)
        let elsewhere = server.client()
        let otherDevice = try await server.signIn(elsewhere, sub: sub)

        let deletion = try await client.deleteAccount()

        #expect(deletion.status == "deleted")
        #expect(["done", "pending"].contains(deletion.appleRevocation))
        #expect(await store.load() == SiwaClientState())
        #expect(try await server.status("GET", "api/me", token: signedIn.session.token) == 401)
        #expect(try await server.status("GET", "api/me", token: otherDevice.session.token) == 401)

        // Signing in again later makes a fresh account.
        let fresh = try await server.signIn(client, sub: sub)
        #expect(fresh.created)
        #expect(fresh.user.id != signedIn.user.id)
        #expect(fresh.user.name == nil)
    }

    @Test func errorsCarryTheServersCode() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let email = "codes-\(UUID().uuidString.prefix(8))@example.com"

        await #expect(throws: SiwaError.notSignedIn) { try await client.me() }
        await #expect(throws: SiwaError.notSignedIn) { try await client.accessToken() }

        let weak = await #expect(throws: SiwaError.self) { try await client.signUp(email: email, password: "password") }
        #expect(weak?.code == .weakPassword)
        #expect(try await client.session == nil)

        try await client.signUp(email: email, password: "correct horse battery")
        let exists = await #expect(throws: SiwaError.self) { try await server.client().signUp(email: email, password: "another good passphrase") }
        #expect(exists?.code == .accountExists)
        if case .server(let status, _, _, _) = exists { #expect(status == 409) }

        let wrong = await #expect(throws: SiwaError.self) { try await server.client().signIn(email: email, password: "not the password") }
        #expect(wrong?.code == .invalidCredentials)

        let badCode = await #expect(throws: SiwaError.self) { try await client.verifyEmail(code: "AAAAAAAAAAAAAAAAAAAAAA") }
        #expect(badCode?.code == .invalidGrant)

        let unknownSession = await #expect(throws: SiwaError.self) { try await client.endSession(id: "ses_unknown") }
        #expect(unknownSession?.code == .notFound)
        // A refusal of one call does not sign anyone out.
        #expect(try await client.isSignedIn)

        let last = await #expect(throws: SiwaError.self) { try await client.removePassword() }
        #expect(last?.code == .lastSignInMethod)
    }
}
