import Foundation
import SiwaClient
import Testing

/// Routes of SPEC 13 and 14 that a server may not have yet (`PATCH /api/account`, the activity
/// trail): checked when the server under test answers them, skipped when it says 404 or 405.
@Suite struct AccountSettingsTests {
    static func missingRoute(_ error: SiwaError?) -> Bool {
        if case .server(let status, _, _, _) = error { return status == 404 || status == 405 }
        return false
    }

    @Test func theLanguageCanBeChanged() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        try await server.signIn(client)
        let user: User
        do {
            user = try await client.updateAccount(locale: "ko")
        } catch let error as SiwaError where Self.missingRoute(error) {
            return
        }
        #expect(user.locale == "ko")
        #expect(try await client.me().locale == "ko")
        let refused = await #expect(throws: SiwaError.self) { try await client.updateAccount(locale: "xx") }
        #expect(refused?.code == .invalidRequest)
    }

    @Test func theActivityListsTheSignIn() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let signedIn = try await server.signIn(client)
        let page: ActivityPage
        do {
            page = try await client.activity(limit: 10)
        } catch let error as SiwaError where Self.missingRoute(error) {
            return
        }
        let signIn = try #require(page.events.first { $0.type == "sign_in.succeeded" })
        #expect(signIn.userId == signedIn.user.id)
        #expect(signIn.detail?["method"]?.string == "apple")
    }
}
