/// What `POST /sim/transfer` did: the app, the teams, and how many people were carried.
public struct SimulatorTransfer: Sendable {
    public let clientID: String
    public let fromTeamID: String
    /// The receiving team with its credentials, to configure its server with.
    public let toTeam: SimulatorTeam
    /// People who had authorized the app and now have a `sub` and `transfer_sub` in `toTeam`.
    public let users: Int
    public let transferredAt: Int64
    /// Until then both teams may call `auth/usermigrationinfo` and tokens carry `transfer_sub`.
    public let windowEndsAt: Int64
}
