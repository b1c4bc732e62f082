import HTTPServer
import JSON
import WireFormat

/// `POST /auth/usermigrationinfo` (APPLE.md §8), both ways. The sending team turns its users'
/// `sub`s into `transfer_sub`s for the recipient team (`sub`, `target`); the recipient turns
/// each `transfer_sub` into its own `sub` (and the user's new Hide My Email address). Either
/// way the client authenticates as on `/auth/token`, and sends a team access token from the
/// `client_credentials` grant as `Authorization: Bearer`. Every refusal is a 400 with Apple's
/// codes: `invalid_client` for client authentication, `invalid_request` for the rest — the
/// missing or foreign token, a `target` that is the caller's own team, a `sub` or
/// `transfer_sub` the caller may not ask about, a user who revoked the app before the move,
/// and a transfer past its 60 days.
struct UserMigrationEndpoint: Sendable {
    let context: SimulatorContext

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let form: FormFields
        switch AppleResponse.form(request) {
        case .success(let fields): form = fields
        case .failure(let refusal): return refusal.response
        }
        let now = context.now
        let team: SimulatorTeam, clientID: String
        switch context.authenticateClient(form, now: now) {
        case .success(let authenticated): (team, clientID) = authenticated
        case .failure(let refusal): return refusal.response
        }
        switch context.access(team, clientID: clientID, now: now) {
        case .owner, .formerOwner(windowOpen: true): break
        case .formerOwner(windowOpen: false): return Self.windowClosed
        case .none: return SimulatorContext.notOwned(clientID).response
        }
        // A peer that forgets the header gets Apple's 400, not a 401: every Apple error is one.
        guard let bearer = Self.bearerToken(request.headers["Authorization"]) else {
            return AppleResponse.error("invalid_request", "Authorization: Bearer <access_token> is required.")
        }
        let tokenProblem = context.store.read { state -> String? in
            guard let token = state.tokens[bearer], token.kind == .access, token.isLive(now: now) else {
                return "The access token is invalid or has expired."
            }
            guard token.clientID == clientID, token.teamID == team.teamID else { return "The access token was not issued to this client." }
            return nil
        }
        if let tokenProblem { return AppleResponse.error("invalid_request", tokenProblem) }

        switch (form.nonEmpty("sub"), form.nonEmpty("transfer_sub")) {
        case (let sub?, nil): return send(sub: sub, target: form.nonEmpty("target"), team: team, clientID: clientID)
        case (nil, let transferSub?): return receive(transferSub: transferSub, team: team, clientID: clientID, now: now)
        case (nil, nil): return AppleResponse.error("invalid_request", "Send sub and target, or transfer_sub.")
        case (_?, _?): return AppleResponse.error("invalid_request", "Send either sub and target, or transfer_sub, not both.")
        }
    }

    static let windowClosedDescription = "User migration for this app is no longer active: the 60 days after its transfer are over."

    static var windowClosed: HTTPResponse { AppleResponse.error("invalid_request", windowClosedDescription) }

    /// The sending team: the user's `transfer_sub` for `target`.
    private func send(sub: String, target: String?, team: SimulatorTeam, clientID: String) -> HTTPResponse {
        guard let target else { return AppleResponse.error("invalid_request", "target is missing.") }
        guard SimulatorTeam.isIdentifier(target) else { return AppleResponse.error("invalid_request", "target is not a team ID.") }
        // One peer sends its own team ID: the target is the team receiving the app.
        guard target != team.teamID else {
            return AppleResponse.error("invalid_request", "target must be the team receiving the app, not the sending team.")
        }
        let outcome = context.store.read { state -> Result<String, AppleRefusal> in
            guard let person = state.persons[sub], person.teamID == team.teamID else {
                return .failure(AppleRefusal("sub is not a user of this team."))
            }
            guard state.grants[Grant.key(sub: sub, clientID: clientID)] != nil else {
                return .failure(AppleRefusal("The user has not authorized this app, or has revoked it."))
            }
            return .success(Person.transferSubject(account: person.account, targetTeam: target))
        }
        switch outcome {
        case .success(let transferSub): return AppleResponse.json(.object(JSONObject([("transfer_sub", .string(transferSub))])))
        case .failure(let refusal): return refusal.response
        }
    }

    /// The receiving team: its `sub` for the user, and their new relay address when they hid
    /// their email (`is_private_email` a real boolean here, unlike in identity tokens).
    private func receive(transferSub: String, team: SimulatorTeam, clientID: String, now: Int64) -> HTTPResponse {
        let outcome = context.store.read { state -> Result<(sub: String, email: String?), AppleRefusal> in
            guard let transfer = state.transfers[clientID], let moved = transfer.users[transferSub] else {
                return .failure(AppleRefusal("transfer_sub is not known for this app."))
            }
            guard transfer.toTeam == team.teamID else { return .failure(AppleRefusal("transfer_sub was issued for another team.")) }
            guard transfer.isActive(now: now) else { return .failure(AppleRefusal(Self.windowClosedDescription)) }
            guard let grant = state.grants[Grant.key(sub: moved.toSub, clientID: clientID)] else {
                return .failure(AppleRefusal("The user has revoked this app."))
            }
            return .success((moved.toSub, grant.isPrivateEmail ? grant.email : nil))
        }
        switch outcome {
        case .success(let user):
            var body = JSONObject([("sub", .string(user.sub))])
            if let email = user.email {
                body["email"] = .string(email)
                body["is_private_email"] = .bool(true)
            }
            return AppleResponse.json(.object(body))
        case .failure(let refusal):
            return refusal.response
        }
    }

    /// The token of `Authorization: Bearer <token>` (the scheme in any case, RFC 9110 §11.1).
    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingHTTPWhitespace()
        return token.isEmpty ? nil : String(token)
    }
}
