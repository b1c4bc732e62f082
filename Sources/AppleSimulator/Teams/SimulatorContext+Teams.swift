import HTTPServer
import JOSE
import WireFormat

/// Teams, who may act for an app, and client authentication across teams.
extension SimulatorContext {
    func team(id: String) -> SimulatorTeam? {
        id == primaryTeam.teamID ? primaryTeam : store.read { $0.teams[id] }
    }

    func team(keyID: String) -> SimulatorTeam? {
        keyID == primaryTeam.keyID ? primaryTeam : store.read { state in state.teams.values.first { $0.keyID == keyID } }
    }

    /// The team with this ID, made with a key of its own when the simulator has not seen it;
    /// the key is saved as `AuthKey_<key id>.p8` in the state directory, as for the first team.
    func makeTeam(_ teamID: String) throws(ControlFailure) -> SimulatorTeam {
        guard SimulatorTeam.isIdentifier(teamID) else { throw ControlFailure("team_id must be ten upper-case letters and digits.") }
        if let known = team(id: teamID) { return known }
        let usedKeyIDs = store.read { Set($0.teams.values.map(\.keyID)) }.union([primaryTeam.keyID])
        let made: SimulatorTeam
        do {
            made = try SimulatorTeam.make(teamID: teamID, avoidingKeyIDs: usedKeyIDs)
            try store.writeFile("AuthKey_\(made.keyID).p8", Array(made.developerKeyPEM.utf8))
        } catch {
            throw ControlFailure("The team's key could not be made: \(error)")
        }
        // Two requests naming a new team at once: the first one's key stands.
        return store.change { state in
            if let raced = state.teams[teamID] { return raced }
            state.teams[teamID] = made
            return made
        }
    }

    /// How a team may act for an app (APPLE.md §8): its owner may do everything; the team
    /// that sent it away may still get a team token and call `auth/usermigrationinfo` for 60
    /// days.
    enum ClientAccess: Equatable {
        case owner
        case formerOwner(windowOpen: Bool)
        case none
    }

    func access(_ team: SimulatorTeam, clientID: String, now: Int64) -> ClientAccess {
        store.read { state in
            if state.owner(of: clientID) == team.teamID { return .owner }
            if let transfer = state.transfers[clientID], transfer.fromTeam == team.teamID {
                return .formerOwner(windowOpen: transfer.isActive(now: now))
            }
            return .none
        }
    }

    /// Checks the client secret of a request against the key of the team it names, and
    /// returns that team and the client ID; or Apple's `invalid_client` answer. Which team's
    /// key is used comes from the secret's `kid` (each team has its own); an unknown `kid` is
    /// checked against the configured team, so the description names what is wrong.
    func authenticateClient(_ form: FormFields, now: Int64) -> Result<(team: SimulatorTeam, clientID: String), AppleRefusal> {
        let secret = form["client_secret"]
        let clientID = form.nonEmpty("client_id")
        let named = secret.flatMap { try? CompactJWS($0) }?.keyID.flatMap { self.team(keyID: $0) }
        let checked = named ?? primaryTeam
        if let failure = checked.secrets.failure(secret: secret, clientID: clientID, now: now) { return .failure(.invalidClient(failure)) }
        guard let clientID else { return .failure(.invalidClient("client_id is missing.")) }
        return .success((checked, clientID))
    }

    /// `invalid_client` for a team acting for an app it does not own. Worded without "team"
    /// or "iss" so `doctor` points at `client_ids` rather than `team_id`.
    static func notOwned(_ clientID: String) -> AppleRefusal {
        .invalidClient("client_id \(clientID) belongs to another developer account.")
    }
}
