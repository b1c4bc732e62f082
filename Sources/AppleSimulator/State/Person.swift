import JSON
import OpenSSLCrypto
import WireFormat

/// An Apple Account as one developer team sees it. `sub` is team-scoped and stable per
/// (team, Apple ID); deleting the account and signing up again with the same email gives a new
/// `sub`, as a deleted Apple Account can never come back (APPLE.md §7).
struct Person: Sendable, Equatable {
    var sub: String
    /// The Apple ID the person typed; nil for people made up through `/sim/codes`.
    var appleID: String?
    /// Hide My Email's address for this person in this team, stable across apps of the team.
    var relayEmail: String
    var createdAt: Int64

    /// Derives Apple's `000123.<32 hex>.0123` shape from the team, the Apple ID and how many
    /// earlier accounts with that Apple ID were deleted, so a simulator without a state
    /// directory still gives a person the same `sub` after a restart.
    static func subject(teamID: String, appleID: String, generation: Int) -> String {
        let digest = SHA256.hash("sub|\(teamID)|\(appleID.lowercased())|\(generation)")
        let prefix = digest[0..<3].map { String(Int($0) % 10) }.joined()
        let suffix = digest[28..<32].map { String(Int($0) % 10) }.joined()
        return "000" + prefix + "." + Hex.encode(digest[4..<20]) + "." + suffix
    }

    static func relayEmail(teamID: String, sub: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let digest = SHA256.hash("relay|\(teamID)|\(sub)")
        let local = digest.prefix(10).map { String(alphabet[Int($0) % alphabet.count]) }.joined()
        return local + "@privaterelay.appleid.com"
    }

    var json: JSONValue {
        .object(.compact([
            ("sub", .string(sub)), ("apple_id", .optional(appleID)), ("relay_email", .string(relayEmail)),
            ("created_at", .integer(createdAt)),
        ]))
    }

    init(sub: String, appleID: String?, relayEmail: String, createdAt: Int64) {
        self.sub = sub
        self.appleID = appleID
        self.relayEmail = relayEmail
        self.createdAt = createdAt
    }

    init?(json: JSONObject) {
        guard let sub = json.text("sub"), let relayEmail = json.text("relay_email") else { return nil }
        self.init(sub: sub, appleID: json.text("apple_id"), relayEmail: relayEmail, createdAt: json.number("created_at") ?? 0)
    }
}
