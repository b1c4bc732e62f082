import JSON

/// Everything the simulator remembers, as plain values: mutated under one lock by
/// `AppleIDSimulator` and written whole to the state file after each change.
struct SimulatorState: Sendable {
    var signingKeys: SigningKeyRing
    /// By `sub`.
    var persons: [String: Person] = [:]
    /// Lower-cased Apple ID → how many accounts with it were deleted (the next `sub` differs).
    var deletedAppleIDs: [String: Int] = [:]
    /// By `Grant.key`.
    var grants: [String: Grant] = [:]
    var codes: [String: AuthorizationCode] = [:]
    /// Refresh and access tokens, by token string.
    var tokens: [String: IssuedToken] = [:]
    /// Lower-cased Apple ID → `sub`, so a sign-in does not scan every person.
    private var subjectsByAppleID: [String: String] = [:]
    private var lastPrune: Int64 = .min

    init(signingKeys: SigningKeyRing) {
        self.signingKeys = signingKeys
    }

    // MARK: People

    /// The person signing in with this Apple ID, made on first sight.
    mutating func person(appleID: String, teamID: String, now: Int64) -> Person {
        let normalized = appleID.lowercased()
        if let sub = subjectsByAppleID[normalized], let existing = persons[sub] { return existing }
        let sub = Person.subject(teamID: teamID, appleID: normalized, generation: deletedAppleIDs[normalized] ?? 0)
        let person = Person(sub: sub, appleID: appleID, relayEmail: Person.relayEmail(teamID: teamID, sub: sub), createdAt: now)
        add(person)
        return person
    }

    /// The person with this `sub`, made up when a test names one the simulator has not seen
    /// (`/sim/codes` stands in for a phone that already signed in).
    mutating func person(sub: String, teamID: String, now: Int64) -> Person {
        if let existing = persons[sub] { return existing }
        let person = Person(sub: sub, appleID: nil, relayEmail: Person.relayEmail(teamID: teamID, sub: sub), createdAt: now)
        add(person)
        return person
    }

    mutating func add(_ person: Person) {
        persons[person.sub] = person
        if let appleID = person.appleID?.lowercased() { subjectsByAppleID[appleID] = person.sub }
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

    /// An Apple Account deleted: every grant, code and token of the person is gone, and signing
    /// up again with the same Apple ID makes a new `sub`. Returns whether the person existed.
    mutating func deleteAccount(sub: String) -> Bool {
        let existed = persons[sub] != nil || grants.values.contains { $0.sub == sub }
        if let appleID = persons[sub]?.appleID?.lowercased() {
            deletedAppleIDs[appleID, default: 0] += 1
            subjectsByAppleID[appleID] = nil
        }
        persons[sub] = nil
        grants = grants.filter { $0.value.sub != sub }
        codes = codes.filter { $0.value.sub != sub }
        tokens = tokens.filter { $0.value.sub != sub }
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
        ]))
    }

    struct Unreadable: Error, CustomStringConvertible {
        let reason: String
        var description: String { "simulator state: \(reason)" }
    }

    /// Reads a saved state; the developer key comes back separately.
    static func load(_ json: JSONValue) throws -> (state: SimulatorState, developerKeyPEM: String?) {
        guard let root = json.object else { throw Unreadable(reason: "not a JSON object") }
        guard root.number("version") == formatVersion else { throw Unreadable(reason: "unknown format version") }
        guard let ring = root["signing_keys"].flatMap(SigningKeyRing.init(json:)) else {
            throw Unreadable(reason: "signing keys missing or unreadable")
        }
        var state = SimulatorState(signingKeys: ring)
        for entry in root["persons"]?.array ?? [] {
            if let person = entry.object.flatMap(Person.init(json:)) { state.add(person) }
        }
        for member in root["deleted_apple_ids"]?.object ?? JSONObject() {
            if let count = member.value.integer { state.deletedAppleIDs[member.key] = Int(count) }
        }
        for entry in root["grants"]?.array ?? [] {
            if let grant = entry.object.flatMap(Grant.init(json:)) { state.grants[grant.key] = grant }
        }
        for entry in root["codes"]?.array ?? [] {
            if let code = entry.object.flatMap(AuthorizationCode.init(json:)) { state.codes[code.code] = code }
        }
        for entry in root["tokens"]?.array ?? [] {
            if let token = entry.object.flatMap(IssuedToken.init(json:)) { state.tokens[token.token] = token }
        }
        return (state, root.text("developer_key"))
    }
}
