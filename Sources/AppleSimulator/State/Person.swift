import JSON
import OpenSSLCrypto
import WireFormat

/// An Apple Account as one developer team sees it. `sub` is team-scoped and stable per
/// (team, Apple Account); deleting the account and signing up again with the same email gives a
/// new `sub`, as a deleted Apple Account can never come back (APPLE.md §7). The same account
/// seen by two teams is two `Person`s sharing `account`.
struct Person: Sendable, Equatable {
    var sub: String
    /// The team this `sub` belongs to.
    var teamID: String
    /// The Apple Account behind the `sub`, the same in every team: `<apple id>|<generation>`
    /// for people who typed an Apple ID, `sub:<sub>` for people made up through `/sim/codes`.
    var account: String
    /// The Apple ID the person typed; nil for people made up through `/sim/codes`.
    var appleID: String?
    /// Hide My Email's address for this person in this team, stable across apps of the team.
    var relayEmail: String
    var createdAt: Int64

    static func account(appleID: String, generation: Int) -> String { "\(appleID.lowercased())|\(generation)" }

    static func account(madeUpSub sub: String) -> String { "sub:" + sub }

    /// Derives Apple's `000123.<32 hex>.0123` shape from the team and the account, so a
    /// simulator without a state directory still gives a person the same `sub` after a restart.
    /// (For an Apple ID this hashes `sub|team|apple id|generation`, as it always has.)
    static func subject(teamID: String, account: String) -> String {
        let digest = SHA256.hash("sub|\(teamID)|\(account)")
        let prefix = digest[0..<3].map { String(Int($0) % 10) }.joined()
        let suffix = digest[28..<32].map { String(Int($0) % 10) }.joined()
        return "000" + prefix + "." + Hex.encode(digest[4..<20]) + "." + suffix
    }

    /// The person's `transfer_sub` for `targetTeam`: stable per (account, recipient team),
    /// whichever app is moved and however often (APPLE.md §8). Shaped like Apple's
    /// `760417.ebbf…1827`.
    static func transferSubject(account: String, targetTeam: String) -> String {
        let digest = SHA256.hash("transfer|\(targetTeam)|\(account)")
        let prefix = digest[0..<6].map { String(Int($0) % 10) }.joined()
        let suffix = digest[28..<32].map { String(Int($0) % 10) }.joined()
        return prefix + "." + Hex.encode(digest[6..<22]) + "." + suffix
    }

    /// Where Hide My Email's new addresses are (APPLE.md §10b: Apple is reported to issue them
    /// at `private.icloud.com` now).
    static let relayDomain = "private.icloud.com"
    /// Where the earlier ones are; they keep working (a saved state keeps each person's own).
    static let earlierRelayDomain = "privaterelay.appleid.com"

    /// A new relay address for the person `sub` in `teamID`.
    static func relayEmail(teamID: String, sub: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let digest = SHA256.hash("relay|\(teamID)|\(sub)")
        let local = digest.prefix(10).map { String(alphabet[Int($0) % alphabet.count]) }.joined()
        return local + "@" + relayDomain
    }

    /// Whether `email` is at one of Hide My Email's domains: for addresses a test hands the
    /// simulator without saying. The simulator plays Apple, which knows the addresses it
    /// relays; the server never guesses this and reads `is_private_email`.
    static func isRelayAddress(_ email: String) -> Bool {
        let domain = email.lowercased().split(separator: "@").last.map(String.init)
        return domain == relayDomain || domain == earlierRelayDomain
    }

    var json: JSONValue {
        .object(.compact([
            ("sub", .string(sub)), ("team_id", .string(teamID)), ("account", .string(account)), ("apple_id", .optional(appleID)),
            ("relay_email", .string(relayEmail)), ("created_at", .integer(createdAt)),
        ]))
    }

    init(sub: String, teamID: String, account: String, appleID: String?, relayEmail: String, createdAt: Int64) {
        self.sub = sub
        self.teamID = teamID
        self.account = account
        self.appleID = appleID
        self.relayEmail = relayEmail
        self.createdAt = createdAt
    }

    /// A state saved before teams existed holds people of the configured team only; their
    /// account is derived from what they had (`generation` of their Apple ID, which a live
    /// person always has the current one of).
    init?(json: JSONObject, defaultTeam: String, generation: (String) -> Int) {
        guard let sub = json.text("sub"), let relayEmail = json.text("relay_email") else { return nil }
        let appleID = json.text("apple_id")
        let account = json.text("account")
            ?? appleID.map { Self.account(appleID: $0, generation: generation($0.lowercased())) }
            ?? Self.account(madeUpSub: sub)
        self.init(
            sub: sub, teamID: json.text("team_id") ?? defaultTeam, account: account, appleID: appleID, relayEmail: relayEmail,
            createdAt: json.number("created_at") ?? 0)
    }
}
