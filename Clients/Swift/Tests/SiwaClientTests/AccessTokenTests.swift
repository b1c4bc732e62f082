import Foundation
import SiwaClient
import Testing

@Suite struct AccessTokenTests {
    @Test func anAccessTokenIsReusedUntilShortlyBeforeItExpires() async throws {
        let server = try await TestServer.shared.value
        let clock = HeldClock()
        let client = server.client(now: { clock.now })
        let signedIn = try await server.signIn(client)

        let first = try await client.accessToken()
        let claims = try #require(Self.claims(first))
        #expect(claims["sub"] as? String == signedIn.user.id)
        // Its life is counted on the client's clock from the answer's expires_in (300 s by default).
        let lifetime = try #require(claims["exp"] as? Double) - (try #require(claims["iat"] as? Double))
        #expect(lifetime == 300)
        #expect(try await client.accessToken() == first)

        // Still reused just before the margin (30 s before it expires)…
        clock.advance(by: lifetime - 31)
        #expect(try await client.accessToken() == first)
        // …and replaced within it.
        clock.advance(by: 2)
        let second = try await client.accessToken()
        #expect(second != first)
        #expect(try await client.accessToken() == second)
        #expect(Self.claims(second)?["sub"] as? String == signedIn.user.id)

        // A new session never reuses another session's token.
        try await server.signIn(client, sub: signedIn.user.appleSub!)
        let third = try await client.accessToken()
        #expect(third != second)

        try await client.signOut()
        await #expect(throws: SiwaError.notSignedIn) { try await client.accessToken() }
    }

    @Test func callsAtTheSameTimeShareOneToken() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        try await server.signIn(client)

        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await client.accessToken() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(try await client.accessToken() == tokens.first)
    }

    private static func claims(_ jwt: String) -> [String: Any]? {
        let parts = jwt.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        return Data(base64Encoded: payload).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}
