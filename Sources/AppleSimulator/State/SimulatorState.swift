import JSON

/// Everything the simulator remembers, as plain values: mutated under one lock by
/// `AppleIDSimulator` and written whole to the state file after each change.
struct SimulatorState: Sendable {
    /// The configured team, which owns every app not moved elsewhere. Configuration, not state:
    /// never saved.
    let primaryTeamID: String
    var signingKeys: SigningKeyRing
    /// By `sub` (a `sub` names its team).
    var persons: [String: Person] = [:]
    /// Lower-cased Apple ID → how many accounts with it were deleted (the next `sub` differs).
    var deletedAppleIDs: [String: Int] = [:]
    /// By `Grant.key`.
    var grants: [String: Grant] = [:]
    var codes: [String: AuthorizationCode] = [:]
    /// Refresh and access tokens (team tokens included), by token string.
    var tokens: [String: IssuedToken] = [:]
    /// Teams made through the control API, by team ID (the configured team is not among them).
    var teams: [String: SimulatorTeam] = [:]
    /// Apps owned by a team other than the configured one, by client ID.
    var owners: [String: String] = [:]
    /// The latest transfer of each app, by client ID.
    var transfers: [String: AppTransfer] = [:]
    /// Seconds `POST /sim/clock` added to the configured clock.
    var clockOffset: Int64 = 0
    /// Sending domains each team registered for Private Email Relay (lower-cased), by team ID:
    /// mail to a relay address is forwarded only from these (APPLE.md §10b).
    var relayDomains: [String: Set<String>] = [:]
    /// `team \n account` → `sub`, so a sign-in does not scan every person.
    private var subjectsByAccount: [String: String] = [:]
    private var lastPrune: Int64 = .min

    init(signingKeys: SigningKeyRing, primaryTeamID: String) {
        self.signingKeys = signingKeys
        self.primaryTeamID = primaryTeamID
    }

    // MARK: Teams and apps

    /// The team an app belongs to now; every app starts with the configured team.
    func owner(of clientID: String) -> String { owners[clientID] ?? primaryTeamID }

    /// The `transfer_sub` an identity token for `sub` carries: while the app's latest transfer
    /// is within its window, for the people it moved.
    func transferSub(forSub sub: String, clientID: String, now: Int64) -> String? {
        guard let transfer = transfers[clientID], transfer.isActive(now: now), transfer.toTeam == owner(of: clientID) else { return nil }
        return transfer.transferSub(forNewSub: sub)
    }

    /// Moves an app to `toTeam` (APPLE.md §8): everyone who has authorized it gets a person
    /// and the same consent in the new team, and a `transfer_sub`; the old team's tokens and
    /// codes for the app stop working. Consent the old team lost before the move is not carried.
    mutating func transfer(clientID: String, to toTeam: String, now: Int64) -> AppTransfer {
        let fromTeam = owner(of: clientID)
        var transfer = AppTransfer(clientID: clientID, fromTeam: fromTeam, toTeam: toTeam, transferredAt: now)
        for grant in grants.values where grant.clientID == clientID {
            guard let person = persons[grant.sub], person.teamID == fromTeam else { continue }
            let moved = self.person(account: person.account, teamID: toTeam, appleID: person.appleID, now: now)
            let key = Grant.key(sub: moved.sub, clientID: clientID)
            // Hide My Email gives each team its own address; a shared real address stays.
            grants[key] = grants[key] ?? Grant(
                sub: moved.sub, clientID: clientID, email: grant.isPrivateEmail ? moved.relayEmail : grant.email,
                isPrivateEmail: grant.isPrivateEmail, createdAt: now)
            transfer.add(AppTransfer.MovedUser(
                transferSub: Person.transferSubject(account: person.account, targetTeam: toTeam), fromSub: person.sub, toSub: moved.sub))
        }
        // Team tokens stay: the old team may still call auth/usermigrationinfo in the window.
        tokens = tokens.filter { !($0.value.clientID == clientID && $0.value.teamID == fromTeam && !$0.value.sub.isEmpty) }
        codes = codes.filter { $0.value.clientID != clientID }
        owners[clientID] = toTeam == primaryTeamID ? nil : toTeam
        transfers[clientID] = transfer
        return transfer
    }

    // MARK: People

    /// The person signing in with this Apple ID to an app of `teamID`, made on first sight.
    mutating func person(appleID: String, teamID: String, now: Int64) -> Person {
        let normalized = appleID.lowercased()
        let account = Person.account(appleID: normalized, generation: deletedAppleIDs[normalized] ?? 0)
        return person(account: account, teamID: teamID, appleID: appleID, now: now)
    }

    /// The person with this `sub` as `teamID` sees them: the same Apple Account in that team
    /// when the `sub` belongs to another one, and made up when a test names a `sub` the
    /// simulator has not seen (`/sim/codes` stands in for a phone that already signed in).
    mutating func person(sub: String, teamID: String, now: Int64) -> Person {
        if let existing = persons[sub] {
            guard existing.teamID != teamID else { return existing }
            return person(account: existing.account, teamID: teamID, appleID: existing.appleID, now: now)
        }
        let person = Person(
            sub: sub, teamID: teamID, account: Person.account(madeUpSub: sub), appleID: nil,
            relayEmail: Person.relayEmail(teamID: teamID, sub: sub), createdAt: now)
        add(person)
        return person
    }

    /// The Apple Account `account` as `teamID` sees it, made on first sight.
    mutating func person(account: String, teamID: String, appleID: String?, now: Int64) -> Person {
        if let sub = subjectsByAccount[teamID + "\n" + account], let existing = persons[sub] { return existing }
        let sub = Person.subject(teamID: teamID, account: account)
        let person = Person(
            sub: sub, teamID: teamID, account: account, appleID: appleID, relayEmail: Person.relayEmail(teamID: teamID, sub: sub),
            createdAt: now)
        add(person)
        return person
    }

    /// The person behind `sub` authorizes `clientID` as a phone does (`/sim/codes`): as the
    /// app's owner team sees them, with the email given (a relay address unless said
    /// otherwise), or the one shared before.
    mutating func authorize(sub: String, clientID: String, email: String?, isPrivateEmail: Bool?, now: Int64) -> Grant {
        let person = person(sub: sub, teamID: owner(of: clientID), now: now)
        let key = Grant.key(sub: person.sub, clientID: clientID)
        var grant = grants[key] ?? Grant(sub: person.sub, clientID: clientID, email: nil, isPrivateEmail: false, createdAt: now)
        if let email {
            grant.email = email
            grant.isPrivateEmail = isPrivateEmail ?? Person.isRelayAddress(email)
        } else if let isPrivateEmail {
            grant.isPrivateEmail = isPrivateEmail
        }
        grants[key] = grant
        return grant
    }

    mutating func add(_ person: Person) {
        persons[person.sub] = person
        subjectsByAccount[person.teamID + "\n" + person.account] = person.sub
    }

    /// The client a person first granted, for a notification's `aud`.
    func firstClient(of sub: String) -> String? {
        grants.values.filter { $0.sub == sub }.min { ($0.createdAt, $0.clientID) < ($1.createdAt, $1.clientID) }?.clientID
    }

    // MARK: Ending consent

    /// Ends a person's consent to a client: the grant, its tokens and its unused codes. Returns
    /// how many tokens died.
    @discardableResult
    mutating func revokeGrant(sub: String, clientID: String) -> Int {
        grants[Grant.key(sub: sub, clientID: clientID)] = nil
        codes = codes.filter { !($0.value.sub == sub && $0.value.clientID == clientID) }
        let before = tokens.count
        tokens = tokens.filter { !($0.value.sub == sub && $0.value.clientID == clientID) }
        return before - tokens.count
    }

    /// An Apple Account deleted: as every team saw it, every grant, code and token of the
    /// person is gone, and signing up again with the same Apple ID makes a new `sub`. Returns
    /// whether the person existed.
    mutating func deleteAccount(sub: String) -> Bool {
        let existed = persons[sub] != nil || grants.values.contains { $0.sub == sub }
        var subs: Set<String> = [sub]
        if let person = persons[sub] {
            for other in persons.values where other.account == person.account { subs.insert(other.sub) }
            if let appleID = person.appleID?.lowercased() { deletedAppleIDs[appleID, default: 0] += 1 }
        }
        for gone in subs {
            if let person = persons.removeValue(forKey: gone) { subjectsByAccount[person.teamID + "\n" + person.account] = nil }
        }
        grants = grants.filter { !subs.contains($0.value.sub) }
        codes = codes.filter { !subs.contains($0.value.sub) }
        tokens = tokens.filter { !subs.contains($0.value.sub) }
        return existed
    }

    /// Drops codes long past use and expired access tokens so the state stays small, at most
    /// once a minute so a sign-in does not pay for a scan. Codes are kept for a while after
    /// expiry so a late replay still reads "expired" rather than unknown.
    mutating func prune(now: Int64) {
        guard now >= lastPrune + 60 || now < lastPrune else { return }
        lastPrune = now
        codes = codes.filter { now < $0.value.issuedAt + 2 * AuthorizationCode.lifetime }
        tokens = tokens.filter { $0.value.isLive(now: now) }
    }

    // MARK: State file

    /// Version 1 throughout: what teams and transfers added is optional, so a file saved before
    /// them still loads (its people and apps belong to the configured team).
    static let formatVersion: Int64 = 1

    func json(developerKeyPEM: String) -> JSONValue {
        .object(JSONObject([
            ("version", .integer(Self.formatVersion)),
            ("developer_key", .string(developerKeyPEM)),
            ("signing_keys", signingKeys.json),
            ("persons", .array(persons.values.sorted { $0.sub < $1.sub }.map(\.json))),
            ("deleted_apple_ids", .object(JSONObject(deletedAppleIDs.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) }))),
            ("grants", .array(grants.values.sorted { $0.key < $1.key }.map(\.json))),
            ("codes", .array(codes.values.sorted { $0.code < $1.code }.map(\.json))),
            ("tokens", .array(tokens.values.sorted { $0.token < $1.token }.map(\.json))),
            ("teams", .array(teams.values.sorted { $0.teamID < $1.teamID }.map(\.json))),
            ("owners", .object(JSONObject(owners.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))),
            ("transfers", .array(transfers.values.sorted { $0.clientID < $1.clientID }.map(\.json))),
            ("clock_offset", .integer(clockOffset)),
            ("relay_domains", .object(JSONObject(relayDomains.sorted { $0.key < $1.key }.map { team, domains in
                (team, .array(domains.sorted().map { .string($0) }))
            }))),
        ]))
    }

    struct Unreadable: Error, CustomStringConvertible {
        let reason: String
        var description: String { "simulator state: \(reason)" }
    }

    /// Reads a saved state; the developer key comes back separately.
    static func load(_ json: JSONValue, primaryTeamID: String) throws -> (state: SimulatorState, developerKeyPEM: String?) {
        guard let root = json.object else { throw Unreadable(reason: "not a JSON object") }
        guard root.number("version") == formatVersion else { throw Unreadable(reason: "unknown format version") }
        guard let ring = root["signing_keys"].flatMap(SigningKeyRing.init(json:)) else {
            throw Unreadable(reason: "signing keys missing or unreadable")
        }
        var state = SimulatorState(signingKeys: ring, primaryTeamID: primaryTeamID)
        for member in root["deleted_apple_ids"]?.object ?? JSONObject() {
            if let count = member.value.integer { state.deletedAppleIDs[member.key] = Int(count) }
        }
        let generations = state.deletedAppleIDs
        for entry in root["persons"]?.array ?? [] {
            if let person = entry.object.flatMap({ Person(json: $0, defaultTeam: primaryTeamID, generation: { generations[$0] ?? 0 }) }) {
                state.add(person)
            }
        }
        for entry in root["grants"]?.array ?? [] {
            if let grant = entry.object.flatMap(Grant.init(json:)) { state.grants[grant.key] = grant }
        }
        for entry in root["codes"]?.array ?? [] {
            if let code = entry.object.flatMap(AuthorizationCode.init(json:)) { state.codes[code.code] = code }
        }
        for entry in root["tokens"]?.array ?? [] {
            if let token = entry.object.flatMap({ IssuedToken(json: $0, defaultTeam: primaryTeamID) }) { state.tokens[token.token] = token }
        }
        for entry in root["teams"]?.array ?? [] {
            if let team = entry.object.flatMap(SimulatorTeam.init(json:)) { state.teams[team.teamID] = team }
        }
        for member in root["owners"]?.object ?? JSONObject() {
            if let team = member.value.string { state.owners[member.key] = team }
        }
        for entry in root["transfers"]?.array ?? [] {
            if let transfer = entry.object.flatMap(AppTransfer.init(json:)) { state.transfers[transfer.clientID] = transfer }
        }
        state.clockOffset = root.number("clock_offset") ?? 0
        for member in root["relay_domains"]?.object ?? JSONObject() {
            let domains = (member.value.array ?? []).compactMap(\.string)
            if !domains.isEmpty { state.relayDomains[member.key] = Set(domains) }
        }
        return (state, root.text("developer_key"))
    }
}
