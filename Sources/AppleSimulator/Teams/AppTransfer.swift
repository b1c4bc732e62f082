import JSON

/// An app moved from one team to another (`POST /sim/transfer`). Every person who had
/// authorized the app got a `sub` in the new team and a `transfer_sub`; for 60 days both
/// teams may call `auth/usermigrationinfo`, and the app's identity tokens carry `transfer_sub`
/// next to the new `sub`. After that the endpoint is inactive for the transfer and tokens
/// stop carrying it (APPLE.md §8).
struct AppTransfer: Sendable, Equatable {
    static let window: Int64 = 60 * 86_400

    struct MovedUser: Sendable, Equatable {
        var transferSub: String
        /// The person's `sub` in the team that sent the app.
        var fromSub: String
        /// Their `sub` in the team that received it.
        var toSub: String
    }

    var clientID: String
    var fromTeam: String
    var toTeam: String
    var transferredAt: Int64
    /// By `transfer_sub`.
    private(set) var users: [String: MovedUser] = [:]
    /// `transfer_sub` by the new team's `sub`, for minting tokens.
    private var transferSubByNewSub: [String: String] = [:]

    init(clientID: String, fromTeam: String, toTeam: String, transferredAt: Int64) {
        self.clientID = clientID
        self.fromTeam = fromTeam
        self.toTeam = toTeam
        self.transferredAt = transferredAt
    }

    var windowEndsAt: Int64 { transferredAt + Self.window }

    func isActive(now: Int64) -> Bool { now < windowEndsAt }

    mutating func add(_ user: MovedUser) {
        users[user.transferSub] = user
        transferSubByNewSub[user.toSub] = user.transferSub
    }

    func transferSub(forNewSub sub: String) -> String? { transferSubByNewSub[sub] }

    var json: JSONValue {
        .object(JSONObject([
            ("client_id", .string(clientID)), ("from_team", .string(fromTeam)), ("to_team", .string(toTeam)),
            ("transferred_at", .integer(transferredAt)),
            ("users", .array(users.values.sorted { $0.transferSub < $1.transferSub }.map { user in
                .object(JSONObject([
                    ("transfer_sub", .string(user.transferSub)), ("from_sub", .string(user.fromSub)), ("to_sub", .string(user.toSub)),
                ]))
            })),
        ]))
    }

    init?(json: JSONObject) {
        guard let clientID = json.text("client_id"), let fromTeam = json.text("from_team"), let toTeam = json.text("to_team"),
              let transferredAt = json.number("transferred_at")
        else { return nil }
        self.init(clientID: clientID, fromTeam: fromTeam, toTeam: toTeam, transferredAt: transferredAt)
        for entry in json["users"]?.array ?? [] {
            guard let user = entry.object, let transferSub = user.text("transfer_sub"), let fromSub = user.text("from_sub"),
                  let toSub = user.text("to_sub")
            else { continue }
            add(MovedUser(transferSub: transferSub, fromSub: fromSub, toSub: toSub))
        }
    }
}
