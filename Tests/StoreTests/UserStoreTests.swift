@testable import Store
import Testing

@Suite struct UserStoreTests {
    @Test(arguments: Engine.available)
    func creationTakesTheTokenEmailOverTheUserObjectAndKeepsTheName(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let identity = VerifiedIdentity(
                appleSub: "sub-1", email: "x@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true,
                realUserStatus: .likelyReal
            )
            let profile = ClientProfile(givenName: "Ada", familyName: "Lovelace", email: "ada@example.com")
            let (user, created) = try await store.engine.write {
                try UserStore.upsertOnSignIn(in: $0, identity: identity, profile: profile, now: 100)
            }
            #expect(created)
            // Ordered by creation (RecordID.make(prefix:orderedBy:)): the users index grows at its end.
            #expect(user.id.hasPrefix("usr_00000064") && user.id.count == 4 + 8 + 32)
            #expect(user.email == "x@privaterelay.appleid.com")
            #expect(user.emailVerified && user.isPrivateEmail)
            #expect(user.emailForwarding == .enabled)
            #expect(user.realUserStatus == .likelyReal)
            #expect(user.givenName == "Ada" && user.familyName == "Lovelace")
            #expect(user.appleCredential == .authorized)
            #expect(user.createdAt == 100 && user.updatedAt == 100)
            await #expect(try store.users.user(id: user.id) == user)
            await #expect(try store.users.user(appleSub: "sub-1") == user)
        }
    }

    @Test(arguments: Engine.available)
    func anEmailOnlyFromTheUserObjectIsUnverified(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let (user, _) = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-2"),
                    profile: ClientProfile(givenName: "Ada", email: "ada@example.com"), now: 100
                )
            }
            #expect(user.email == "ada@example.com")
            #expect(!user.emailVerified && !user.isPrivateEmail)
            #expect(user.emailForwarding == nil)
            #expect(user.familyName == nil)
            #expect(user.realUserStatus == .unsupported)
        }
    }

    @Test(arguments: Engine.available)
    func updateKeepsNameAndLetsOnlyTheTokenChangeEmail(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let first = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-3", email: "a@example.com", emailVerified: true, realUserStatus: .likelyReal),
                    profile: ClientProfile(givenName: "Ada", familyName: "Lovelace"), now: 100
                ).user
            }
            // The user object on a later sign-in changes nothing; a token without email or
            // real_user_status keeps the stored ones.
            let (second, created) = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-3"),
                    profile: ClientProfile(givenName: "Eve", familyName: "Mallory", email: "eve@example.com"), now: 200
                )
            }
            #expect(!created)
            #expect(second.id == first.id)
            #expect(second.givenName == "Ada" && second.familyName == "Lovelace")
            #expect(second.email == "a@example.com" && second.emailVerified)
            #expect(second.realUserStatus == .likelyReal)
            #expect(second.createdAt == 100 && second.updatedAt == 200)

            // A token email always wins.
            let third = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-3", email: "b@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true, realUserStatus: .unknown),
                    profile: nil, now: 300
                ).user
            }
            #expect(third.email == "b@privaterelay.appleid.com" && third.isPrivateEmail && third.emailForwarding == .enabled)
            #expect(third.realUserStatus == .unknown)
        }
    }

    @Test(arguments: Engine.available)
    func tokenEmailReplacesAnUnverifiedUserObjectEmail(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            _ = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-4"), profile: ClientProfile(email: "typed@example.com"), now: 1
                )
            }
            let user = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-4", email: "real@example.com", emailVerified: true), profile: nil, now: 2
                ).user
            }
            #expect(user.email == "real@example.com" && user.emailVerified)
        }
    }

    @Test(arguments: Engine.available)
    func revokedThenSignInRestoresTheSameUser(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let users = store.users
            let id = try await makeUser(store, sub: "sub-5")
            let sessions = store.uncachedSessions
            _ = try await sessions.create(userID: id, deviceName: nil, now: 1_000, ttl: 100)
            let vault = store.vault
            try await vault.store(userID: id, clientID: "com.example.app", refreshToken: "r", accessToken: "a", now: 1_000)

            #expect(try await users.markRevoked(userID: id, now: 1_001))
            await #expect(try users.user(id: id)?.appleCredential == .revoked)
            await #expect(try sessions.list(userID: id, now: 1_001).isEmpty)
            await #expect(try vault.load(userID: id) == nil)
            #expect(try await users.markRevoked(userID: id, now: 1_002) == false)

            let (again, created) = try await store.engine.write {
                try UserStore.upsertOnSignIn(in: $0, identity: VerifiedIdentity(appleSub: "sub-5"), profile: nil, now: 1_003)
            }
            #expect(!created && again.id == id && again.appleCredential == .authorized)
        }
    }

    @Test(arguments: Engine.available)
    func emailForwardingFollowsNotifications(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let users = store.users
            _ = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-6", email: "r@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: nil, now: 1
                )
            }
            #expect(try await users.setEmailForwarding(appleSub: "sub-6", enabled: false, now: 2))
            await #expect(try users.user(appleSub: "sub-6")?.emailForwarding == .disabled)
            #expect(try await users.setEmailForwarding(appleSub: "sub-6", enabled: false, now: 3) == false)
            #expect(try await users.setEmailForwarding(appleSub: "nobody", enabled: false, now: 3) == false)
            // A later sign-in with the same relay address keeps the disabled state.
            let user = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "sub-6", email: "r@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: nil, now: 4
                ).user
            }
            #expect(user.emailForwarding == .disabled)
            #expect(try await users.setEmailForwarding(appleSub: "sub-6", enabled: true, email: "n@privaterelay.appleid.com", isPrivateEmail: true, now: 5))
            let enabled = try await #require(try users.user(appleSub: "sub-6"))
            #expect(enabled.emailForwarding == .enabled && enabled.email == "n@privaterelay.appleid.com" && enabled.updatedAt == 5)
        }
    }

    @Test(arguments: Engine.available)
    func deletionTakesSessionsAndTokensWithIt(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let users = store.users
            let id = try await makeUser(store, sub: "sub-7")
            let session = try await store.uncachedSessions.create(userID: id, deviceName: "phone", now: 1_000, ttl: 100)
            let vault = store.vault
            try await vault.store(userID: id, clientID: "c", refreshToken: "r", accessToken: nil, now: 1_000)

            #expect(try await users.delete(userID: id))
            await #expect(try users.user(id: id) == nil)
            await #expect(try store.uncachedSessions.authenticate(token: session.token, now: 1_001, idleTTL: 100) == nil)
            await #expect(try vault.load(userID: id) == nil)
            #expect(try await users.delete(userID: id) == false)

            // Signing in again later makes a fresh account.
            let fresh = try await makeUser(store, sub: "sub-7")
            #expect(fresh != id)
        }
    }
}
