import Foundation
import SiwaClient
import Testing

/// Password accounts: sign-up, the emailed (here: webhooked) code, the upgrade to Sign in with
/// Apple, linking, and a reset.
@Suite struct PasswordTests {
    static func newEmail() -> String { "person-\(UUID().uuidString.prefix(12).lowercased())@example.com" }

    /// Without SMTP the server sends the code in a `user.email_verification_requested` event.
    static func verificationCode(_ server: TestServer, email: String, type: String = "user.email_verification_requested") async throws -> String {
        try #require(try await eventually { server.webhooks.code(type: type, email: email) }, "no \(type) webhook for \(email)")
    }

    @Test func signUpVerifyAndUpgradeToSignInWithApple() async throws {
        let server = try await TestServer.shared.value
        let provider = StubCredentialStateProvider()
        let store = MemorySessionStore()
        let client = server.client(store: store, provider: provider)
        let email = Self.newEmail()
        let password = "correct horse battery"

        let signedUp = try await client.signUp(email: email, password: password, name: PersonName(given: "Mary", family: "Jackson"))
        #expect(signedUp.created)
        #expect(signedUp.user.signInMethods == ["password"])
        #expect(signedUp.user.emailVerified == false)
        #expect(signedUp.user.name == PersonName(given: "Mary", family: "Jackson"))
        #expect(await store.load().session?.appleUserID == nil)

        // A second code on request; the newest one proves the address.
        let first = try await Self.verificationCode(server, email: email)
        try await client.requestEmailVerification()
        let second = try #require(try await eventually { () -> String? in
            let code = server.webhooks.code(type: "user.email_verification_requested", email: email)
            return code == first ? nil : code
        })
        let verified = try await server.client().verifyEmail(code: second)
        #expect(verified.id == signedUp.user.id)
        #expect(verified.emailVerified)

        // The password extension's upgrade: the password and Apple's credential together.
        let sub = TestServer.newSub()
        let nonce = AppleNonce()
        let upgraded = try await client.upgrade(
            email: email, password: password, credential: try await server.credential(sub: sub, nonce: nonce), nonce: nonce.raw)
        #expect(!upgraded.created)
        #expect(upgraded.user.id == signedUp.user.id)
        #expect(upgraded.user.signInMethods == ["apple"])
        #expect(upgraded.user.appleSub == sub)
        #expect(await store.load().session?.token == upgraded.session.token)
        #expect(await store.load().session?.appleUserID == sub)
        let gone = await #expect(throws: SiwaError.self) { try await server.client().signIn(email: email, password: password) }
        #expect(gone?.code == .invalidCredentials)

        // From now on the launch check asks Apple about this Apple ID.
        provider.set(.authorized, for: sub)
        #expect(try await client.checkCredentialState() == .authorized)
        #expect(provider.questions == [sub])
    }

    @Test func linkAndUnlinkAnAppleID() async throws {
        let server = try await TestServer.shared.value
        let store = MemorySessionStore()
        let client = server.client(store: store)
        let email = Self.newEmail()
        try await client.signUp(email: email, password: "correct horse battery")
        let sub = TestServer.newSub()

        // An unproven email carries no Apple ID.
        let early = AppleNonce()
        let refused = await #expect(throws: SiwaError.self) {
            try await client.linkApple(try await server.credential(sub: sub, nonce: early), nonce: early.raw)
        }
        #expect(refused?.code == .emailUnverified)

        try await client.verifyEmail(code: try await Self.verificationCode(server, email: email))
        let nonce = AppleNonce()
        let linked = try await client.linkApple(try await server.credential(sub: sub, nonce: nonce), nonce: nonce.raw)
        #expect(linked.signInMethods == ["apple", "password"])
        #expect(await store.load().session?.appleUserID == sub)

        let unlinked = try await client.unlinkApple()
        #expect(unlinked.signInMethods == ["password"])
        #expect(await store.load().session?.appleUserID == nil)
        #expect(try await client.me().appleSub == nil)
    }

    @Test func aResetEndsEverySessionAndTheNewPasswordSignsIn() async throws {
        let server = try await TestServer.shared.value
        let store = MemorySessionStore()
        let client = server.client(store: store)
        let email = Self.newEmail()
        try await client.signUp(email: email, password: "correct horse battery")
        try await client.setPassword(current: "correct horse battery", new: "another long passphrase")

        try await client.requestPasswordReset(email: email)
        let code = try await Self.verificationCode(server, email: email, type: "user.password_reset_requested")
        try await client.resetPassword(code: code, newPassword: "a third long passphrase")

        // The server ended this session; the client learns it at its next call.
        let ended = await #expect(throws: SiwaError.self) { try await client.me() }
        #expect(ended?.code == .unauthenticated)
        #expect(await store.load().session == nil)
        let signedIn = try await client.signIn(email: email, password: "a third long passphrase")
        #expect(signedIn.user.email == email)
        #expect(signedIn.user.emailVerified)
    }
}
