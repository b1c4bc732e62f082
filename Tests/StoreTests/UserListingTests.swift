import Foundation
import OpenSSLCrypto
@testable import Store
import Testing
import TestSupport

/// `UserStore.list(matching:after:limit:)`: the admin API's listing (docs/guides/connecting-your-backend.md), exact filters and
/// keyset pages in id order, on both engines.
@Suite(.timeLimit(.minutes(2)))
struct UserListingTests {

    /// A user signed in for `sub` with `email`; returns its id.
    static func user(_ store: Store, sub: String, email: String, now: Int64 = 1_000) async throws -> String {
        let write = SignInWrite(
            identity: VerifiedIdentity(appleSub: sub, email: email, emailVerified: true), tokenHash: SHA256.hash("token-\(sub)"),
            tokenExpiresAt: now + 600, sessionTTL: 86_400)
        return try await store.completeSignIn(write, now: now).user.id
    }

    /// Every page of a listing, `limit` users at a time, as the API walks it.
    static func pages(_ store: Store, _ filter: UserFilter, limit: Int) async throws -> [[String]] {
        var pages: [[String]] = []
        var after: String?
        while true {
            let page = try await store.users.list(matching: filter, after: after, limit: limit)
            guard !page.isEmpty else { return pages }
            pages.append(page.map(\.id))
            after = page.last?.id
        }
    }

    @Test(arguments: Engine.available)
    func pagesWalkEveryUserOnceInIDOrder(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            var ids: [String] = []
            for index in 0..<7 { ids.append(try await Self.user(store, sub: "sub-\(index)", email: "u\(index)@example.com")) }
            let pages = try await Self.pages(store, UserFilter(), limit: 3)
            #expect(pages.map(\.count) == [3, 3, 1])
            #expect(pages.flatMap { $0 } == ids.sorted())

            // A user deleted between pages shifts nothing: the next page starts after the last id seen.
            let first = try await store.users.list(matching: UserFilter(), after: nil, limit: 3)
            _ = try await store.deleteUser(userID: first[0].id, now: 2_000, firstAttemptAt: 2_000)
            let second = try await store.users.list(matching: UserFilter(), after: first.last?.id, limit: 3)
            #expect(second.map(\.id) == Array(ids.sorted()[3..<6]))
        }
    }

    @Test(arguments: Engine.available)
    func filtersMatchExactlyAndPageToo(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            var shared: [String] = []
            for index in 0..<5 { shared.append(try await Self.user(store, sub: "shared-\(index)", email: "team@example.com")) }
            let other = try await Self.user(store, sub: "other", email: "other@example.com")
            _ = try await store.setExternalID(userID: shared[2], externalID: "crm-2", now: 1_100)

            // An email several users share, two at a time.
            let pages = try await Self.pages(store, UserFilter(email: "team@example.com"), limit: 2)
            #expect(pages.map(\.count) == [2, 2, 1])
            #expect(pages.flatMap { $0 } == shared.sorted())
            // Exact: neither case nor a prefix matches.
            #expect(try await store.users.list(matching: UserFilter(email: "TEAM@example.com"), after: nil, limit: 10).isEmpty)
            #expect(try await store.users.list(matching: UserFilter(email: "team@"), after: nil, limit: 10).isEmpty)

            #expect(try await store.users.list(matching: UserFilter(appleSub: "other"), after: nil, limit: 10).map(\.id) == [other])
            #expect(try await store.users.list(matching: UserFilter(externalID: "crm-2"), after: nil, limit: 10).map(\.id) == [shared[2]])
            // Filters combine: all must match.
            #expect(try await store.users.list(matching: UserFilter(email: "team@example.com", externalID: "crm-2"), after: nil, limit: 10)
                .map(\.id) == [shared[2]])
            #expect(try await store.users.list(matching: UserFilter(email: "other@example.com", externalID: "crm-2"), after: nil, limit: 10)
                .isEmpty)
        }
    }

    /// Each filter is an index search, never a scan of every user, on the first page or a
    /// later one; many users sharing an email come in id order, unsorted. (SQLite's plan; PostgreSQL's planner may scan a test's
    /// tiny table, so its plan proves nothing.)
    @Test(arguments: [UserFilter(email: "team@example.com"), UserFilter(appleSub: "sub"), UserFilter(externalID: "crm-1")])
    func filtersReadAnIndexInIDOrder(_ filter: UserFilter) async throws {
        try await withStore(.sqlite) { store in
            for after in [nil, "usr_m"] {
                let (sql, parameters) = UserStore.listing(matching: filter, after: after, limit: 51)
                let plan = try await store.engine.read { connection in
                    try connection.query("EXPLAIN QUERY PLAN " + sql, parameters).map { try $0.string("detail") }
                }
                let users = plan.filter { $0.contains(" u ") }
                #expect(users.count == 1 && users[0].hasPrefix("SEARCH u USING"), "\(plan)")
                // Many users may share an email: their index is already in id order. (apple_sub
                // and external_id are unique: at most one row to sort.)
                if filter.email != nil { #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)") }
            }
        }
    }
}
