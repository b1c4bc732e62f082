import JSON
import Testing
@testable import AppleClient

/// Relay status of a migrated user is Apple's `is_private_email` alone (APPLE.md §8, §10b):
/// relay addresses were `@privaterelay.appleid.com` and new ones are reported at
/// `@private.icloud.com`, so the domain decides nothing either way.
@Suite struct MigratedUserTests {
    static func user(email: String?, flag: JSONValue?) throws -> MigratedUser {
        var object = JSONObject([("sub", .string("820417.faa3.0219"))])
        if let email { object["email"] = .string(email) }
        if let flag { object["is_private_email"] = flag }
        return try #require(MigratedUser(object))
    }

    @Test(arguments: [
        // The new relay domain, flagged: relay.
        ("x@private.icloud.com", JSONValue.bool(true), true),
        ("x@private.icloud.com", .string("true"), true),
        // The old relay domain, flagged: still relay.
        ("x@privaterelay.appleid.com", .bool(true), true),
        // Flagged false, or not flagged: not relay, whatever the domain.
        ("x@privaterelay.appleid.com", .bool(false), false),
        ("x@privaterelay.appleid.com", .string("false"), false),
        ("x@private.icloud.com", .bool(false), false),
    ])
    func theFlagDecidesAndTheDomainDoesNot(_ email: String, _ flag: JSONValue, _ isRelay: Bool) throws {
        let user = try Self.user(email: email, flag: flag)
        #expect(user.isPrivateEmail == isRelay)
        #expect(user.email == email && user.sub == "820417.faa3.0219")
    }

    @Test(arguments: ["x@privaterelay.appleid.com", "x@private.icloud.com"])
    func withoutTheFlagAnAddressIsNotTakenForARelay(_ email: String) throws {
        #expect(try Self.user(email: email, flag: nil).isPrivateEmail == false)
    }

    @Test func aUserWhoSharedNoAddressIsNoRelay() throws {
        let user = try Self.user(email: nil, flag: nil)
        #expect(user.email == nil && !user.isPrivateEmail)
    }
}
