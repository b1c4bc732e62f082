import OpenSSLCrypto
@testable import Store
import Testing

@Suite struct AppleTokenVaultTests {
    @Test(arguments: Engine.available)
    func storesSealedAndLoadsBack(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let vault = store.vault
            try await vault.store(userID: userID, clientID: "com.example.app", refreshToken: "r.secret", accessToken: "a.secret", now: 10)

            let tokens = try await #require(try vault.load(userID: userID))
            #expect(tokens == AppleTokens(clientID: "com.example.app", refreshToken: "r.secret", accessToken: "a.secret", updatedAt: 10))
            // At rest the tokens are not in clear.
            let row = try #require(try await store.engine.read { try $0.queryOne("SELECT refresh_token, access_token FROM apple_tokens") })
            let sealed = try row.blob("refresh_token")
            #expect(!String(decoding: sealed, as: UTF8.self).contains("r.secret"))
            #expect(sealed.count == 12 + "r.secret".utf8.count + 16)

            // A refresh grant's answer (no refresh token) keeps the stored one.
            try await vault.store(userID: userID, clientID: "com.example.app", refreshToken: nil, accessToken: "a.2", now: 20)
            await #expect(try vault.load(userID: userID)?.refreshToken == "r.secret")
            await #expect(try vault.load(userID: userID)?.accessToken == "a.2")

            // Readable inside a write transaction too (account deletion queues the tokens).
            let inWrite = try await store.engine.write { try vault.load(userID: userID, in: $0) }
            #expect(inWrite?.accessToken == "a.2")

            #expect(try await vault.drop(userID: userID))
            let dropped = try await vault.load(userID: userID)
            #expect(dropped == nil)
            #expect(try await vault.drop(userID: userID) == false)
        }
    }

    @Test(arguments: Engine.available)
    func aRowCopiedToAnotherUserDoesNotOpen(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let ada = try await makeUser(store, sub: "ada")
            let eve = try await makeUser(store, sub: "eve")
            let vault = store.vault
            try await vault.store(userID: ada, clientID: "c", refreshToken: "ada-refresh", accessToken: "ada-access", now: 1)
            try await store.engine.write { connection in
                try connection.run(
                    """
                    INSERT INTO apple_tokens(user_id, client_id, refresh_token, access_token, updated_at)
                    SELECT ?, client_id, refresh_token, access_token, updated_at FROM apple_tokens WHERE user_id = ?
                    """,
                    [.text(eve), .text(ada)]
                )
            }
            await #expect(throws: CryptoError.self) { try await vault.load(userID: eve) }
            await #expect(try vault.load(userID: ada)?.refreshToken == "ada-refresh")
        }
    }

    @Test(arguments: Engine.available)
    func swappedColumnsDoNotOpen(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let ada = try await makeUser(store)
            let vault = store.vault
            try await vault.store(userID: ada, clientID: "c", refreshToken: "refresh", accessToken: "access", now: 1)
            try await store.engine.write { try $0.run("UPDATE apple_tokens SET access_token = refresh_token") }
            await #expect(throws: CryptoError.self) { try await vault.load(userID: ada) }
        }
    }

    @Test(arguments: Engine.available)
    func anotherKeyDoesNotOpen(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let ada = try await makeUser(store)
            try await store.vault.store(userID: ada, clientID: "c", refreshToken: "refresh", accessToken: nil, now: 1)
            let other = try AppleTokenVault(engine: store.engine, key: [UInt8](repeating: 0x43, count: 32))
            await #expect(throws: CryptoError.self) { try await other.load(userID: ada) }
        }
    }
}
