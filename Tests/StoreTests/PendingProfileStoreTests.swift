@testable import Store
import Testing

@Suite struct PendingProfileStoreTests {
    @Test(arguments: Engine.available)
    func theNextSignInAdoptsTheProfileOnce(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let profiles = store.pendingProfiles
            try await profiles.hold(appleSub: "s", profile: ClientProfile(givenName: "Ada", familyName: "Lovelace", email: "ada@example.com"), now: 1_000)

            let (user, adopted) = try await store.engine.write { connection in
                let pending = try PendingProfileStore.adopt(appleSub: "s", now: 2_000, in: connection)
                let user = try UserStore.upsertOnSignIn(in: connection, identity: VerifiedIdentity(appleSub: "s"), profile: pending?.profile, now: 2_000).user
                return (user, pending)
            }
            #expect(adopted?.expiresAt == Int64(1_000 + 86_400))
            #expect(user.givenName == "Ada" && user.familyName == "Lovelace" && user.email == "ada@example.com")
            // Adopted means deleted.
            let again = try await store.engine.write { try PendingProfileStore.adopt(appleSub: "s", now: 2_001, in: $0) }
            #expect(again == nil)
        }
    }

    @Test(arguments: Engine.available)
    func aFailedSignInLeavesTheProfileHeld(_ engine: Engine) async throws {
        struct Failure: Error {}
        try await withStore(engine) { store in
            let profiles = store.pendingProfiles
            try await profiles.hold(appleSub: "s", profile: ClientProfile(givenName: "Ada"), now: 1_000)
            await #expect(throws: Failure.self) {
                try await store.engine.write { connection in
                    _ = try PendingProfileStore.adopt(appleSub: "s", now: 1_001, in: connection)
                    throw Failure()
                }
            }
            let held = try await store.engine.write { try PendingProfileStore.adopt(appleSub: "s", now: 1_002, in: $0) }
            #expect(held?.givenName == "Ada")
        }
    }

    @Test(arguments: Engine.available)
    func aProfileExpiresAfter24Hours(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let profiles = store.pendingProfiles
            try await profiles.hold(appleSub: "late", profile: ClientProfile(email: "a@example.com"), now: 1_000)
            let expired = try await store.engine.write { try PendingProfileStore.adopt(appleSub: "late", now: 1_000 + 86_400, in: $0) }
            #expect(expired == nil)

            try await profiles.hold(appleSub: "old", profile: ClientProfile(givenName: "A"), now: 0)
            try await profiles.hold(appleSub: "new", profile: ClientProfile(givenName: "B"), now: 50_000)
            try await profiles.hold(appleSub: "empty", profile: ClientProfile(givenName: ""), now: 50_000)
            #expect(try await profiles.prune(now: 86_400) == 1)
            let left = try await store.engine.read { try $0.query("SELECT apple_sub FROM pending_profiles").map { try $0.string(0) } }
            #expect(left == ["new"])
        }
    }
}
