import Foundation
import Testing

@testable import SiwaClient

/// Tokens never reach a log through a printed value.
@Suite struct RedactionTests {
    @Test func aPrintedSessionHidesItsToken() throws {
        let session = StoredSession(token: "secret-token-value", expiresAt: Date(), userID: "usr_1", appleUserID: "000123.abc.0123")
        let state = SiwaClientState(session: session)
        for text in [String(describing: session), String(reflecting: session), String(describing: state), "\(state)"] {
            #expect(!text.contains("secret-token-value"))
            #expect(text.contains("usr_1"))
        }
        let json = Data(#"{"session":{"token":"secret-token-value","expires_at":"2026-11-27T03:00:00Z"},"user":{"id":"usr_1","apple_sub":null,"email":null,"email_verified":false,"is_private_email":false,"email_forwarding":null,"real_user_status":"unknown","name":null,"apple_credential":null,"external_id":null,"sign_in_methods":["password"],"created_at":"2026-11-27T03:00:00Z","updated_at":"2026-11-27T03:00:00.123Z"},"created":true}"#.utf8)
        let result = try APICoding.decoder().decode(SignInResult.self, from: json)
        #expect(result.session.token == "secret-token-value")
        #expect(!String(describing: result).contains("secret-token-value"))
    }
}
