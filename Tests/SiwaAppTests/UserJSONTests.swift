import Accounts
import JSON
import SQLRow
import Testing
@testable import Store

/// `UserJSON.bytes` writes the `USER` object directly for `/api/me`; it must be the same bytes
/// as the JSON tree every other route writes, whatever the record holds.
@Suite struct UserJSONTests {
    private static func user(
        appleSub: String? = "001234.abc", email: String? = "a@example.com", forwarding: String? = nil, given: String? = nil,
        family: String? = nil, externalID: String? = nil, hasPassword: Bool = false, credential: String = "authorized",
        status: String = "likely_real", createdAt: Int64 = 1_795_000_000
    ) throws -> UserRecord {
        let names = [
            "id", "apple_sub", "email", "email_verified", "is_private_email", "email_forwarding", "real_user_status", "given_name",
            "family_name", "apple_credential", "external_id", "has_password", "locale", "created_at", "updated_at",
        ]
        let values: [SQLValue] = [
            "u_1", appleSub.map(SQLValue.text) ?? .null, email.map(SQLValue.text) ?? .null, .integer(1), .integer(forwarding == nil ? 0 : 1),
            forwarding.map(SQLValue.text) ?? .null, .text(status), given.map(SQLValue.text) ?? .null, family.map(SQLValue.text) ?? .null,
            .text(credential), externalID.map(SQLValue.text) ?? .null, .boolean(hasPassword), "ko", .integer(createdAt),
            .integer(createdAt + 86_461),
        ]
        return try UserRecord(row: SQLRow(columns: SQLColumns(names: names), values: values[...]))
    }

    static let users: [@Sendable () throws -> UserRecord] = [
        { try user() },
        { try user(appleSub: nil, email: nil, hasPassword: true) },
        { try user(hasPassword: true, credential: "revoked", status: "unknown") },
        { try user(forwarding: "disabled", given: "Ada", status: "unsupported") },
        { try user(forwarding: "enabled", family: "Lovelace") },
        { try user(given: "A \"quoted\" \\ name\n\u{01}", family: "日本 😀 \u{2028}", externalID: "crm-\u{7F}-\"x\"") },
        { try user(email: "é@example.com", given: "", family: "", externalID: "", createdAt: 0) },
    ]

    @Test(arguments: 0..<users.count)
    func writesTheSameBytesAsTheTree(_ index: Int) throws {
        let user = try Self.users[index]()
        let expected = JSONWriter.bytes(UserJSON.value(user))
        #expect(UserJSON.bytes(user) == expected, "\(String(decoding: expected, as: UTF8.self))")
        var appended: [UInt8] = Array("x".utf8)
        UserJSON.write(user, into: &appended)
        #expect(appended == Array("x".utf8) + expected)
    }
}
