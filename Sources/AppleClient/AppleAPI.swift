import HTTPClient
import JOSE
import JSON
import Synchronization
import WireFormat

/// Apple's REST endpoints: code exchange, refresh-token validation, revocation and user
/// migration, always form-encoded with a fresh-enough client secret (APPLE.md §2, §3, §8).
/// Apple's answers are mapped once, here, to `AppleAPIError`.
public final class AppleAPI: Sendable {
    private let baseURL: String
    private let http: HTTPClient
    private let secrets: ClientSecretMinter
    private let observer: (any AppleCallObserver)?
    private let clock: @Sendable () -> Int64
    private let monotonic: @Sendable () -> Double
    /// Team access tokens for user migration by client id, with when to stop using them.
    private let teamTokens = Mutex<[String: (token: String, renewAt: Int64)]>([:])

    public init(
        baseURL: String, http: HTTPClient, secrets: ClientSecretMinter, observer: (any AppleCallObserver)? = nil,
        clock: @escaping @Sendable () -> Int64, monotonic: @escaping @Sendable () -> Double
    ) {
        self.baseURL = baseURL
        self.http = http
        self.secrets = secrets
        self.observer = observer
        self.clock = clock
        self.monotonic = monotonic
    }

    /// Exchanges an authorization code. A code is single use, so this request is never
    /// re-sent once it may have reached Apple, whatever fails after.
    /// `redirectURI` only for codes from the web flow; native codes must not carry one.
    public func exchangeCode(_ code: String, clientID: String, redirectURI: String?) async throws(AppleAPIError) -> TokenResponse {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID)]
        if let redirectURI { fields.append(("redirect_uri", redirectURI)) }
        return try await tokenCall(fields, clientID: clientID, idempotent: false)
    }

    /// Asks Apple whether a refresh token is still good (`invalid_grant` when it is not).
    public func validateRefreshToken(_ refreshToken: String, clientID: String) async throws(AppleAPIError) -> TokenResponse {
        try await tokenCall(
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)],
            clientID: clientID, idempotent: true)
    }

    /// Revokes a token at `auth/revoke`. Apple answers 200 even for tokens it does not know
    /// (APPLE.md §3), so success proves only that Apple accepted the request.
    public func revoke(_ token: String, kind: TokenKind, clientID: String) async throws(AppleAPIError) {
        let secret = try clientSecret(for: clientID)
        let body = FormURLEncoding.encode([
            ("client_id", clientID), ("client_secret", secret), ("token", token), ("token_type_hint", kind.rawValue),
        ])
        _ = try await call(.revoke, body: body, idempotent: true)
    }

    // MARK: User migration (APPLE.md §8)

    /// A team token is used until this long before Apple says it expires, so a call never
    /// carries one that dies on the way.
    static let teamTokenMargin: Int64 = 120

    /// The team access token for user migration (`client_credentials`, `scope=user.migration`),
    /// reused while valid. Apple documents no rate limit for this grant (TN3159), but there is
    /// no reason to ask it once per user.
    public func teamAccessToken(clientID: String) async throws(AppleAPIError) -> String {
        let now = clock()
        if let cached = teamTokens.withLock({ $0[clientID] }), now < cached.renewAt { return cached.token }
        let response = try await tokenCall(
            [("grant_type", "client_credentials"), ("scope", "user.migration"), ("client_id", clientID)], clientID: clientID,
            idempotent: true)
        let lifetime = response.expiresIn ?? 3600
        teamTokens.withLock { $0[clientID] = (response.accessToken, now + max(lifetime - Self.teamTokenMargin, 0)) }
        return response.accessToken
    }

    /// The sending team's call: the user's `transfer_sub` for the team receiving the app.
    /// `target` is that team's ID, never our own (Apple refuses it; peers have sent it).
    public func transferSubject(forSub sub: String, target: String, clientID: String) async throws(AppleAPIError) -> String {
        let object = try await migrationCall([("sub", sub), ("target", target)], clientID: clientID)
        guard let transferSub = object["transfer_sub"]?.string, !transferSub.isEmpty else {
            throw .unavailable(reason: "malformed usermigrationinfo response")
        }
        return transferSub
    }

    /// The receiving team's call: our `sub` for a user we received, and their new Hide My Email
    /// address when they use one.
    public func migratedUser(transferSubject: String, clientID: String) async throws(AppleAPIError) -> MigratedUser {
        let object = try await migrationCall([("transfer_sub", transferSubject)], clientID: clientID)
        guard let user = MigratedUser(object) else { throw .unavailable(reason: "malformed usermigrationinfo response") }
        return user
    }

    /// `auth/usermigrationinfo` with the team token as `Authorization: Bearer` (one peer forgets
    /// it) and the client secret. Asking again changes nothing at Apple, so it may be retried.
    private func migrationCall(_ fields: [(String, String)], clientID: String) async throws(AppleAPIError) -> JSONObject {
        let token = try await teamAccessToken(clientID: clientID)
        let secret = try clientSecret(for: clientID)
        let body = FormURLEncoding.encode(fields + [("client_id", clientID), ("client_secret", secret)])
        guard let object = try await call(.userMigrationInfo, body: body, idempotent: true, headers: [("Authorization", "Bearer " + token)]) else {
            throw .unavailable(reason: "empty usermigrationinfo response")
        }
        return object
    }

    private func tokenCall(_ fields: [(String, String)], clientID: String, idempotent: Bool) async throws(AppleAPIError) -> TokenResponse {
        let secret = try clientSecret(for: clientID)
        let body = FormURLEncoding.encode(fields + [("client_secret", secret)])
        let object = try await call(.token, body: body, idempotent: idempotent)
        guard let object, let response = TokenResponse(object) else { throw .unavailable(reason: "malformed token response") }
        return response
    }

    private func clientSecret(for clientID: String) throws(AppleAPIError) -> String {
        do {
            return try secrets.secret(for: clientID, now: clock())
        } catch {
            throw .invalidClient
        }
    }

    /// Sends one form POST and sorts the answer; records the outcome either way.
    private func call(
        _ endpoint: AppleEndpoint, body: [UInt8], idempotent: Bool, headers: [(String, String)] = []
    ) async throws(AppleAPIError) -> JSONObject? {
        let started = monotonic()
        do {
            let object = try await send(endpoint, body: body, idempotent: idempotent, headers: headers)
            observer?.appleCall(endpoint: endpoint, outcome: "ok", seconds: monotonic() - started)
            return object
        } catch {
            observer?.appleCall(endpoint: endpoint, outcome: error.outcome, seconds: monotonic() - started)
            throw error
        }
    }

    private func send(
        _ endpoint: AppleEndpoint, body: [UInt8], idempotent: Bool, headers: [(String, String)]
    ) async throws(AppleAPIError) -> JSONObject? {
        let request = HTTPClientRequest(
            method: "POST", url: baseURL + endpoint.path,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")] + headers, body: body)
        let response: HTTPClientResponse
        do {
            response = try await http.send(request, idempotent: idempotent)
        } catch {
            throw .unavailable(reason: "\(error)")
        }
        switch response.status {
        case 200:
            // revoke answers 200 with an empty body.
            if response.body.isEmpty { return nil }
            guard let object = try? JSONParser.parse(response.body).object else { throw .unavailable(reason: "malformed response") }
            return object
        case 429:
            // Throttled, whatever the body says: slow down and ask again (APPLE.md §2.3).
            throw .unavailable(reason: "throttled (429)")
        case 400..<500:
            let code = (try? JSONParser.parse(response.body).object)?["error"]?.string
            switch code {
            case "invalid_grant": throw .invalidGrant
            case "invalid_request": throw .invalidRequest
            case "invalid_client": throw .invalidClient
            case let code?: throw .rejected(code: String(code.prefix(64)))
            case nil: throw .rejected(code: "http_\(response.status)")
            }
        default:
            throw .unavailable(reason: "HTTP \(response.status)")
        }
    }
}
