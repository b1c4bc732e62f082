import Accounts
import HTTPServer
import JSON
import OpenSSLCrypto
import Store

/// `POST /api/auth/exchange` (docs/guides/connecting-your-backend.md): an app trades the one-time code of its web sign-in and
/// its PKCE verifier for a session, with the body of a native sign-in. The code is used up by
/// the attempt, whether it succeeds or not.
struct AppCodeExchangeAPI: Sendable {
    let store: Store
    let sessionTTL: Int64
    let clock: @Sendable () -> Int64
    /// `trusted_proxies`, for the audit event's client address.
    var trustedProxies = CIDRSet()

    static let invalidGrant = APIError(status: 400, code: "invalid_grant", description: "the code is unknown, used or expired, or the verifier does not match")

    func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        let object: JSONObject
        do {
            object = try JSONParser.object(request.body)
        } catch {
            throw APIError.invalidRequest(error.description)
        }
        guard let code = object["code"]?.string, !code.isEmpty, code.utf8.count <= 512 else {
            throw APIError.invalidRequest("code is required and must be a non-empty string")
        }
        guard let verifier = object["code_verifier"]?.string else { throw APIError.invalidRequest("code_verifier is required and must be a string") }
        var deviceName: String?
        if let value = object["device_name"], !value.isNull {
            guard let text = value.string else { throw APIError.invalidRequest("device_name must be a string") }
            deviceName = text.isEmpty ? nil : StoredText.cut(text)
        }
        let redeemed = try await store.redeemAppReturnCode(
            codeHash: SHA256.hash(Array(code.utf8)), verifies: { AppReturn.verifier(verifier, matches: $0) }, deviceName: deviceName,
            sessionTTL: sessionTTL, now: clock(), audit: AuditContext(request, trusted: trustedProxies))
        guard let signedIn = redeemed else { throw Self.invalidGrant }
        return NativeSignInAPI.response(user: signedIn.user, session: signedIn.session, created: signedIn.created)
    }
}
