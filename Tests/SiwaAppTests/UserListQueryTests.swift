import Store
import Testing
@testable import SiwaApp

/// The query of `GET /admin/users`, read without a socket.
@Suite struct UserListQueryTests {
    @Test func filtersLimitAndCursorAreRead() throws {
        let cursor = UserListQuery.cursor(after: "usr_0123abcd")
        let query = try UserListQuery(parsing: "email=ada%40example.com&apple_sub=000123.abc.0123&external_id=crm+1&limit=200&cursor=\(cursor)")
        #expect(query == UserListQuery(
            filter: UserFilter(email: "ada@example.com", appleSub: "000123.abc.0123", externalID: "crm 1"), limit: 200, afterID: "usr_0123abcd"))
        #expect(try UserListQuery(parsing: nil) == UserListQuery())
        #expect(try UserListQuery(parsing: "").limit == 50)
        #expect(try UserListQuery(parsing: "limit=1").limit == 1)
        #expect(try UserListQuery(parsing: "limit=007").limit == 7)
    }

    @Test func aLimitOutside1To200IsRefused() {
        for value in ["0", "201", "-1", "+5", "1.5", "abc", "", "1e2", "99999999999999999999", " 5"] {
            #expect(throws: UserListQuery.Invalid(description: "limit must be a whole number from 1 to 200"), "\(value)") {
                try UserListQuery(parsing: "limit=" + value.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "+", with: "%2B"))
            }
        }
    }

    @Test func cursorsAreOpaqueAndOnlyOursAreAccepted() throws {
        let cursor = UserListQuery.cursor(after: "usr_ff00")
        #expect(!cursor.contains("usr_"))
        #expect(UserListQuery.id(inCursor: cursor) == "usr_ff00")
        // Not base64url, empty, or an encoded text no id can be.
        for bad in ["%%%", "", "dXNyIGZm" /* "usr ff" */, "Lw" /* "/" */, String(repeating: "A", count: 200), "dXNyX2ZmMDA="] {
            #expect(UserListQuery.id(inCursor: bad) == nil, "\(bad)")
        }
        #expect(throws: UserListQuery.Invalid.self) { try UserListQuery(parsing: "cursor=dXNyIGZm") }
    }

    @Test func unknownRepeatedEmptyOrMalformedParametersAreRefused() {
        #expect(throws: UserListQuery.Invalid.self) { try UserListQuery(parsing: "emial=ada@example.com") }
        #expect(throws: UserListQuery.Invalid.self) { try UserListQuery(parsing: "email=a&email=b") }
        #expect(throws: UserListQuery.Invalid.self) { try UserListQuery(parsing: "email=") }
        #expect(throws: UserListQuery.Invalid.self) { try UserListQuery(parsing: "apple_sub") }
        #expect(throws: UserListQuery.Invalid.self) { try UserListQuery(parsing: "email=%ZZ") }
        // A parameter's name is quoted without its control characters.
        do {
            _ = try UserListQuery(parsing: "a%0Ab=1")
            Issue.record("an unknown parameter was accepted")
        } catch {
            #expect(error.description.contains("\"ab\""))
        }
    }
}
