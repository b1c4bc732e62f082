import SQLite
import Store
import Testing

@Suite struct ServerStateTests {
    @Test func setThenGetRoundTrips() async throws {
        try await withTemporaryFolder { folder in
            let database = try StoreOpener.open(path: folder + "/siwa.sqlite3", readers: 2)
            defer { database.close() }
            let state = ServerState(database: database)

            #expect(try state.get("apple_jwks") == nil)
            await #expect(try state.updatedAt("apple_jwks") == nil)

            let keys = Array("{\"keys\":[]}".utf8)
            try await state.set("apple_jwks", keys)
            #expect(try state.get("apple_jwks") == keys)
            let updatedAt = try await #require(try state.updatedAt("apple_jwks"))
            #expect(updatedAt.hasSuffix("Z"))

            try await state.set("apple_jwks", [0, 1, 2])
            #expect(try state.get("apple_jwks") == [0, 1, 2])
            try await state.set("empty", [])
            #expect(try state.get("empty") == [])
            #expect(try state.get("apple_jwks") == [0, 1, 2])
        }
    }

    @Test func survivesReopening() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            do {
                let database = try StoreOpener.open(path: path, readers: 1)
                defer { database.close() }
                try await ServerState(database: database).set("k", [42])
            }
            let database = try StoreOpener.open(path: path, readers: 1)
            defer { database.close() }
            #expect(try ServerState(database: database).get("k") == [42])
        }
    }
}
