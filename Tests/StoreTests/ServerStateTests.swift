import Store
import Testing

@Suite struct ServerStateTests {
    @Test(arguments: Engine.available)
    func setThenGetRoundTrips(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let state = store.serverState

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

    @Test(arguments: Engine.available)
    func survivesReopening(_ engine: Engine) async throws {
        try await withLocation(engine) { location in
            do {
                let store = try Store.open(location, connections: 1) { testDataKey }
                defer { store.close() }
                try await store.serverState.set("k", [42])
            }
            let store = try Store.open(location, connections: 1) { testDataKey }
            defer { store.close() }
            #expect(try store.serverState.get("k") == [42])
        }
    }
}
