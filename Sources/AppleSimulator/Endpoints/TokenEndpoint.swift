import HTTPServer
import JSON

/// `POST /auth/token`: code exchange and refresh, with Apple's checks and Apple's answers
/// (APPLE.md §2).
struct TokenEndpoint: Sendable {
    static let accessTokenLifetime: Int64 = 3600

    let context: SimulatorContext

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        // Apple reads only form bodies. What it answers otherwise varies (APPLE.md §11.7): a
        // body declared as JSON is `invalid_request`; JSON sent under a form content type has
        // no `grant_type` Apple can read, so it is `unsupported_grant_type` (F/122593).
        guard FormFields.isFormContentType(request.headers["Content-Type"]) else {
            return AppleResponse.error("invalid_request", "Content-Type must be application/x-www-form-urlencoded.")
        }
        let looksLikeJSON = request.body.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "{")
        let form: FormFields
        do {
            form = try FormFields(parsing: request.body)
        } catch .duplicate(let name) {
            return AppleResponse.error("invalid_request", "Duplicate parameter: \(name).")
        } catch {
            return looksLikeJSON
                ? AppleResponse.error("unsupported_grant_type", "grant_type could not be read.")
                : AppleResponse.error("invalid_request", "The request body is not percent-encoded form data.")
        }
        guard let grantType = form.nonEmpty("grant_type") else {
            return looksLikeJSON
                ? AppleResponse.error("unsupported_grant_type", "grant_type could not be read.")
                : AppleResponse.error("invalid_request", "grant_type is missing.")
        }
        guard ["authorization_code", "refresh_token", "client_credentials"].contains(grantType) else {
            return AppleResponse.error("unsupported_grant_type", "Unsupported grant_type: \(grantType).")
        }
        let now = context.now
        let team: SimulatorTeam, clientID: String
        switch context.authenticateClient(form, now: now) {
        case .success(let authenticated): (team, clientID) = authenticated
        case .failure(let refusal): return refusal.response
        }
        // Only the app's owner signs people in; the team that sent it away keeps the team
        // token it needs for user migration while the window is open (APPLE.md §8).
        switch context.access(team, clientID: clientID, now: now) {
        case .owner: break
        case .formerOwner(windowOpen: true) where grantType == "client_credentials": break
        default: return SimulatorContext.notOwned(clientID).response
        }
        do {
            switch grantType {
            case "authorization_code": return try exchange(form, clientID: clientID, now: now)
            case "refresh_token": return try refresh(form, clientID: clientID, now: now)
            default: return clientCredentials(form, clientID: clientID, teamID: team.teamID, now: now)
            }
        } catch {
            context.logger.error("simulator token endpoint failed: \(error)")
            return AppleResponse.error("server_error", "The simulator could not sign the token.", status: 500)
        }
    }

    private enum Outcome: Sendable {
        case issued(IdentityTokenMinter.Subject, accessToken: String, refreshToken: String?, key: SigningKeyRing.SigningKey)
        case refused(code: String, description: String)
    }

    private func exchange(_ form: FormFields, clientID: String, now: Int64) throws -> HTTPResponse {
        guard let code = form.nonEmpty("code") else { return AppleResponse.error("invalid_request", "code is missing.") }
        let redirectURI = form["redirect_uri"]
        let outcome = context.store.change { state -> Outcome in
            state.prune(now: now)
            guard var issued = state.codes[code], !issued.isExpired(now: now) else {
                return .refused(code: "invalid_grant", description: "The code has expired or has been revoked.")
            }
            guard !issued.used else { return .refused(code: "invalid_grant", description: "The code has already been used.") }
            guard issued.clientID == clientID else {
                // Pitfall 5: a native code exchanged with the Services ID, or the reverse.
                return .refused(code: "invalid_grant", description: "client_id mismatch. The code was not issued to \(clientID).")
            }
            // Pitfall 6: the authorize request's redirect_uri must come back exactly; a native
            // code had none, so sending one fails.
            switch (issued.redirectURI, redirectURI) {
            case (nil, let sent?) where !sent.isEmpty:
                return .refused(code: "invalid_grant", description: "redirect_uri is not allowed: the code was issued without one.")
            case (let expected?, let sent) where sent != expected:
                return .refused(code: "invalid_grant", description: "redirect_uri does not match the authorization request.")
            default: break
            }
            issued.used = true
            state.codes[code] = issued
            let accessToken = OpaqueToken.accessToken.make()
            let refreshToken = OpaqueToken.refreshToken.make()
            let teamID = state.owner(of: clientID)
            state.tokens[refreshToken] = IssuedToken(
                token: refreshToken, kind: .refresh, sub: issued.sub, clientID: clientID, teamID: teamID, email: issued.email,
                isPrivateEmail: issued.isPrivateEmail, issuedAt: now, expiresAt: nil)
            state.tokens[accessToken] = IssuedToken(
                token: accessToken, kind: .access, sub: issued.sub, clientID: clientID, teamID: teamID, email: issued.email,
                isPrivateEmail: issued.isPrivateEmail, issuedAt: now, expiresAt: now + Self.accessTokenLifetime)
            let subject = IdentityTokenMinter.Subject(
                sub: issued.sub, clientID: clientID, email: issued.email, isPrivateEmail: issued.isPrivateEmail, nonce: issued.nonce,
                authTime: issued.authTime, transferSub: state.transferSub(forSub: issued.sub, clientID: clientID, now: now))
            return .issued(subject, accessToken: accessToken, refreshToken: refreshToken, key: state.signingKeys.current)
        }
        return try respond(outcome, now: now) { .exchange(accessToken: $0) }
    }

    private func refresh(_ form: FormFields, clientID: String, now: Int64) throws -> HTTPResponse {
        guard let token = form.nonEmpty("refresh_token") else {
            // Pitfall 8: a refresh request that sends the token as `code` (F/121627).
            if form["code"] != nil {
                return AppleResponse.error("unsupported_grant_type", "A refresh_token grant needs refresh_token, not code.")
            }
            return AppleResponse.error("invalid_request", "refresh_token is missing.")
        }
        let outcome = context.store.change { state -> Outcome in
            state.prune(now: now)
            // A token issued to the team that has since sent the app away is dead too.
            guard let issued = state.tokens[token], issued.kind == .refresh, issued.teamID == state.owner(of: issued.clientID) else {
                return .refused(code: "invalid_grant", description: "The token has expired or has been revoked.")
            }
            guard issued.clientID == clientID else {
                return .refused(code: "invalid_grant", description: "client_id mismatch. The token was not issued to \(clientID).")
            }
            let accessToken = OpaqueToken.accessToken.make()
            state.tokens[accessToken] = IssuedToken(
                token: accessToken, kind: .access, sub: issued.sub, clientID: clientID, teamID: issued.teamID, email: issued.email,
                isPrivateEmail: issued.isPrivateEmail, issuedAt: now, expiresAt: now + Self.accessTokenLifetime)
            let subject = IdentityTokenMinter.Subject(
                sub: issued.sub, clientID: clientID, email: issued.email, isPrivateEmail: issued.isPrivateEmail, nonce: nil,
                authTime: issued.issuedAt, transferSub: state.transferSub(forSub: issued.sub, clientID: clientID, now: now))
            // Apple returns no new refresh token on a refresh grant (APPLE.md §2.2).
            return .issued(subject, accessToken: accessToken, refreshToken: nil, key: state.signingKeys.current)
        }
        return try respond(outcome, now: now) { .refresh(accessToken: $0) }
    }

    /// The team token used for user migration (APPLE.md §8): an access token and nothing else.
    private func clientCredentials(_ form: FormFields, clientID: String, teamID: String, now: Int64) -> HTTPResponse {
        guard form["scope"] == "user.migration" else { return AppleResponse.error("invalid_scope", "scope must be user.migration.") }
        let accessToken = OpaqueToken.accessToken.make()
        context.store.change { state in
            state.prune(now: now)
            state.tokens[accessToken] = IssuedToken(
                token: accessToken, kind: .access, sub: "", clientID: clientID, teamID: teamID, email: nil, isPrivateEmail: false,
                issuedAt: now, expiresAt: now + Self.accessTokenLifetime)
        }
        return AppleResponse.json(.object(JSONObject([
            ("access_token", .string(accessToken)), ("token_type", .string("Bearer")), ("expires_in", .integer(Self.accessTokenLifetime)),
        ])))
    }

    private func respond(
        _ outcome: Outcome, now: Int64, flavor: (String) -> IdentityTokenMinter.Flavor
    ) throws -> HTTPResponse {
        switch outcome {
        case .refused(let code, let description):
            return AppleResponse.error(code, description)
        case .issued(let subject, let accessToken, let refreshToken, let key):
            let idToken = try context.identityTokens.mint(for: subject, flavor: flavor(accessToken), now: now, key: key)
            var body = JSONObject([
                ("access_token", .string(accessToken)), ("token_type", .string("Bearer")), ("expires_in", .integer(Self.accessTokenLifetime)),
            ])
            if let refreshToken { body["refresh_token"] = .string(refreshToken) }
            body["id_token"] = .string(idToken)
            return AppleResponse.json(.object(body))
        }
    }
}
