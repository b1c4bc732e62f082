import HTTPServer
import WireFormat

/// `POST /auth/revoke` (APPLE.md §3): revoking a refresh or access token ends the person's
/// consent to the client, so their next authorization is a first one again (`user` is sent).
/// The answer is 200 with an empty body whether or not the token meant anything: Apple
/// answers garbage tokens the same way (F/707610), so a 200 proves nothing.
struct RevokeEndpoint: Sendable {
    let context: SimulatorContext

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let form: FormFields
        switch AppleResponse.form(request) {
        case .success(let fields): form = fields
        case .failure(let refusal): return refusal.response
        }
        let now = context.now
        let clientID: String
        switch context.authenticateClient(form, now: now) {
        case .success(let authenticated):
            guard context.access(authenticated.team, clientID: authenticated.clientID, now: now) == .owner else {
                return SimulatorContext.notOwned(authenticated.clientID).response
            }
            clientID = authenticated.clientID
        case .failure(let refusal): return refusal.response
        }
        guard let token = form.nonEmpty("token") else { return AppleResponse.error("invalid_request", "token is missing.") }
        let hint = form.nonEmpty("token_type_hint")
        if let hint, TokenKind(rawValue: hint) == nil {
            return AppleResponse.error("invalid_request", "token_type_hint must be refresh_token or access_token.")
        }
        let mismatch = context.store.change { state -> Bool in
            guard let issued = state.tokens[token], issued.clientID == clientID, issued.isLive(now: now) else { return false }
            if let hint, hint != issued.kind.rawValue { return true }
            if issued.sub.isEmpty {
                state.tokens[token] = nil
            } else {
                state.revokeGrant(sub: issued.sub, clientID: clientID)
            }
            return false
        }
        if mismatch { return AppleResponse.error("invalid_request", "token_type_hint does not match the token.") }
        return AppleResponse.empty()
    }
}
