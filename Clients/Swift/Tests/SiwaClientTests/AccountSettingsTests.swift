import Foundation
import SiwaClient
import Testing

/// The account's settings (`PATCH /api/account`) and its activity trail.
@Suite struct AccountSettingsTests {

    @Test func theLanguageCanBeChanged() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        try await server.signIn(client)
        let user = try await client.updateAccount(locale: "ko")
        #expect(user.locale == "ko")
        #expect(try await client.me().locale == "ko")
        let refused = await #expect(throws: SiwaError.self) { try await client.updateAccount(locale: "xx") }
        #expect(refused?.code == .invalidRequest)
    }

    @Test func theActivityListsTheSignIn() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let signedIn = try await server.signIn(client)
        let page = try await client.activity(limit: 10)
        let signIn = try #require(page.events.first { $0.type == "sign_in.succeeded" })
        #expect(signIn.userId == signedIn.user.id)
        #expect(signIn.detail?["method"]?.string == "apple")
    }
}
