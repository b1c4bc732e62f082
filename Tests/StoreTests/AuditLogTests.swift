import JSON
import OpenSSLCrypto
import Testing
import WireFormat
@testable import Store

/// The audit trail's table on both engines: keyset pages that neither repeat nor skip while
/// events are written, type prefixes, what a context keeps, and that a change refused keeps
/// no event.
@Suite struct AuditLogTests {
    static func record(_ store: Store, _ type: AuditEventType, user: String, at time: Int64) async throws {
        try await store.engine.write { connection in
            try AuditTrail.record(type, userID: user, context: AuditContext(actor: .user, ip: "192.0.2.1"), now: time, in: connection)
        }
    }

    static func all(_ store: Store, _ filter: AuditFilter = AuditFilter()) async throws -> [AuditEvent] {
        try await store.audit.page(filter, after: nil, limit: 10_000).events
    }

    @Test(arguments: Engine.available)
    func pagesAreStableWhileEventsAreWritten(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            // 40 events over 10 seconds, four in each second.
            for n in 0..<40 { try await Self.record(store, .signInSucceeded, user: "usr_a", at: 1_000 + Int64(n / 4)) }
            let before = try await Self.all(store).map(\.id)
            #expect(before.count == 40)

            // A writer keeps adding events, newer ones and ones in seconds already listed,
            // while the pages are read.
            let writer = Task {
                for n in 0..<60 {
                    try await Self.record(store, .signInFailed, user: "usr_a", at: n.isMultiple(of: 2) ? 2_000 + Int64(n) : 1_000 + Int64(n % 10))
                }
            }
            var read: [String] = []
            var cursor: AuditCursor?
            repeat {
                let page = try await store.audit.page(AuditFilter(userID: "usr_a", typePrefix: "sign_in.succeeded"), after: cursor, limit: 7)
                #expect(page.events.count <= 7)
                read += page.events.map(\.id)
                cursor = page.next
                // Between pages too, deterministically: one newer, one in the cursor's second.
                if let cursor {
                    try await Self.record(store, .signInSucceeded, user: "usr_a", at: 3_000)
                    try await Self.record(store, .signInSucceeded, user: "usr_a", at: cursor.at)
                }
            } while cursor != nil
            try await writer.value
            // Every event that was there is read once, in the order it had; a new one may be
            // read (it came after the cursor in the order), never twice.
            #expect(Set(read).count == read.count)
            #expect(read.filter(before.contains) == before)
        }
    }

    @Test(arguments: Engine.available)
    func newestFirstByTimeThenByWhenWritten(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await Self.record(store, .userCreated, user: "usr_a", at: 1_000)
            try await Self.record(store, .signInSucceeded, user: "usr_a", at: 1_000)
            try await Self.record(store, .sessionEnded, user: "usr_a", at: 999)
            try await Self.record(store, .signInFailed, user: "usr_b", at: 1_001)
            #expect(try await Self.all(store).map(\.type) == ["sign_in.failed", "sign_in.succeeded", "user.created", "session.ended"])
            #expect(try await Self.all(store, AuditFilter(typePrefix: "sign_in.")).map(\.type) == ["sign_in.failed", "sign_in.succeeded"])
            #expect(try await Self.all(store, AuditFilter(typePrefix: "sign")).count == 2)
            #expect(try await Self.all(store, AuditFilter(typePrefix: "sign_in.%")).isEmpty, "a prefix, not a pattern")
            #expect(try await Self.all(store, AuditFilter(userID: "usr_a", since: 1_000)).map(\.type) == ["sign_in.succeeded", "user.created"])
            #expect(try await Self.all(store, AuditFilter(until: 1_000)).map(\.type) == ["session.ended"])
            let first = try #require(try await Self.all(store).first)
            #expect(first.actor == "user" && first.ip == "192.0.2.1" && first.userAgent == nil && first.detail.isEmpty)
        }
    }

    @Test(arguments: Engine.available)
    func aRefusedChangeKeepsNoEvent(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let first = try await BothEnginesTests.signIn(store, sub: "sub-a", token: "t-1")
            let other = try await BothEnginesTests.signIn(store, sub: "sub-b", token: "t-2")
            let count = try await store.audit.count()
            // The same identity token again: the sign-in is refused whole.
            await #expect(throws: SignInConflict.tokenReplayed) { try await BothEnginesTests.signIn(store, sub: "sub-a", token: "t-1") }
            _ = try await store.setExternalID(userID: first.user.id, externalID: "crm-1", now: 1_001)
            await #expect(throws: ExternalIDTaken.self) { try await store.setExternalID(userID: other.user.id, externalID: "crm-1", now: 1_002) }
            #expect(try await store.endSessions(userID: "usr_unknown", now: 1_003) == nil)
            #expect(try await store.deleteUser(userID: "usr_unknown", now: 1_003, firstAttemptAt: 1_003) == nil)
            #expect(try await store.audit.count() == count + 1, "only the external id that was set")
        }
    }

    @Test func aUserAgentIsCutTo256BytesOnACharacterBoundary() {
        let ascii = String(repeating: "a", count: 300)
        #expect(AuditContext(actor: .user, userAgent: ascii).userAgent == String(repeating: "a", count: 256))
        // 255 bytes, then a 4-byte character that would cross the limit: left out whole.
        let emoji = String(repeating: "b", count: 255) + "🍏" + "c"
        #expect(AuditContext(actor: .user, userAgent: emoji).userAgent == String(repeating: "b", count: 255))
        // A combining sequence is one character: never split from its base.
        let combined = String(repeating: "d", count: 254) + "e\u{301}"
        #expect(AuditContext(actor: .user, userAgent: combined).userAgent == String(repeating: "d", count: 254))
        #expect(AuditContext(actor: .user, userAgent: "Juice/1.0").userAgent == "Juice/1.0")
        #expect(AuditContext(actor: .user, userAgent: "\u{0}").userAgent == nil)
        #expect(AuditContext(actor: .user, userAgent: "").userAgent == nil)
    }

    static func url(_ text: String) -> String { Base64.url.encode(Array(text.utf8)) }

    @Test func aCursorReadsBackOnlyAsWritten() {
        let cursor = AuditCursor(at: 1_800_000_000, seq: 42)
        #expect(AuditCursor(encoded: cursor.encoded) == cursor)
        for bad in ["", "x", cursor.encoded + "A", Self.url("1.0"), Self.url("01.2"), Self.url("1.2.3"), Self.url("a.b")] {
            #expect(AuditCursor(encoded: bad) == nil, "\(bad)")
        }
    }
}
