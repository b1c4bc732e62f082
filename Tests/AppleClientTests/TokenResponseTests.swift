import JSON
import Testing
@testable import AppleClient

@Suite struct TokenResponseTests {
    /// Numbers from Apple are outside input: a lifetime no clock should have added to is dropped.
    @Test(arguments: [Int64.max, Int64.min, -1, 31_536_001])
    func anAbsurdExpiresInIsDropped(_ seconds: Int64) throws {
        let response = try #require(TokenResponse(JSONObject([("access_token", .string("a")), ("expires_in", .integer(seconds))])))
        #expect(response.expiresIn == nil)
    }

    @Test func applesExpiresInIsKept() throws {
        let response = try #require(TokenResponse(JSONObject([("access_token", .string("a")), ("expires_in", .integer(3600))])))
        #expect(response.expiresIn == 3600)
    }
}
