import Testing
import WireFormat

@Suite struct TokenKindTests {
    /// Stored in the database, in sealed values' associated data and in the simulator's state
    /// file, and sent to Apple: these spellings are fixed.
    @Test func rawValuesAreOAuthsNames() {
        #expect(TokenKind.refresh.rawValue == "refresh_token")
        #expect(TokenKind.access.rawValue == "access_token")
        #expect(TokenKind.allCases.count == 2)
        #expect(TokenKind(rawValue: "id_token") == nil)
        #expect(TokenKind(rawValue: "Refresh_Token") == nil)
    }
}
