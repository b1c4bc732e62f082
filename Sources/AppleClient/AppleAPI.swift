import HTTPClient
import JOSE
import JSON
import WireFormat

/// Apple's REST endpoints: code exchange, refresh-token validation and revocation, always
/// form-encoded with a fresh-enough client secret (APPLE.md §2, §3). Apple's answers are
/// mapped once, here, to `AppleAPIError`.
public final class AppleAPI: Sendable {
    private let baseURL: String
    private let http: HTTPClient
    private let secrets: ClientSecretMinter
    private let observer: (any AppleCallObserver)?
    private let clock: @Sendable () -> Int64
    private let monotonic: @Sendable () -> Double

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
    private func call(_ endpoint: AppleEndpoint, body: [UInt8], idempotent: Bool) async throws(AppleAPIError) -> JSONObject? {
        let started = monotonic()
        do {
            let object = try await send(endpoint, body: body, idempotent: idempotent)
            observer?.appleCall(endpoint: endpoint, outcome: "ok", seconds: monotonic() - started)
            return object
        } catch {
            observer?.appleCall(endpoint: endpoint, outcome: error.outcome, seconds: monotonic() - started)
            throw error
        }
    }

    private func send(_ endpoint: AppleEndpoint, body: [UInt8], idempotent: Bool) async throws(AppleAPIError) -> JSONObject? {
        let request = HTTPClientRequest(
            method: "POST", url: baseURL + endpoint.path,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")], body: body)
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
        case 400..<500:
            let code = (try? JSONParser.parse(response.body).object)?["error"]?.string
            switch code {
            case "invalid_grant": throw .invalidGrant
            case "invalid_request": throw .invalidRequest
            case "invalid_client": throw .invalidClient
            case let code?: throw .rejected(code: String(code.prefix(64)))
            case nil: throw response.status == 429 ? .unavailable(reason: "throttled (429)") : .rejected(code: "http_\(response.status)")
            }
        default:
            throw .unavailable(reason: "HTTP \(response.status)")
        }
    }
}
