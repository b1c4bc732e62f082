import Accounts
import HTTPServer
import JSON
import Store

/// `POST /api/auth/apple` (docs/reference/http-api.md "Native sign-in"): the JSON body of a native app, or the
/// result of Sign in with Apple JS popup mode that the web page forwards. A page of this site
/// (its `Origin` is `public_url`'s) also gets the session as the `siwa_session` cookie.
struct NativeSignInAPI: Sendable {
    let signIn: SignIn
    let cookies: SessionCookies
    /// `trusted_proxies`, for the audit events' client address.
    var trustedProxies = CIDRSet()

    func signIn(_ request: HTTPRequest) async throws(SignIn.Failure) -> HTTPResponse {
        var input = try Self.parse(request.body)
        input.locale = RequestLocale.of(request)
        input.audit = AuditContext(request, trusted: trustedProxies)
        let result = try await signIn.run(input, requestID: request.requestID)
        var response = Self.response(user: result.user, session: result.session, created: result.created)
        if cookies.isSameOrigin(request) { response.headers.add("Set-Cookie", cookies.session(result.session)) }
        return response
    }

    /// The body of a successful sign-in (`session`, `user`, `created`), shared by every route
    /// that makes a session for an app.
    static func response(user: UserRecord, session: NewSession, created: Bool) -> HTTPResponse {
        let body = JSONValue.object(JSONObject([
            ("session", .object(JSONObject([
                ("token", .string(session.token)), ("expires_at", .string(RFC3339.format(session.record.expiresAt))),
            ]))),
            ("user", UserJSON.value(user)),
            ("created", .bool(created)),
        ]))
        return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(body))
    }

    static func parse(_ body: [UInt8]) throws(SignIn.Failure) -> SignIn.Input {
        let parsed: SignInRequestBody
        do {
            parsed = try SignInRequestBody(parsing: body)
        } catch {
            throw .invalidRequest(error.description)
        }
        var input = SignIn.Input(identityToken: parsed.identityToken)
        input.authorizationCode = parsed.authorizationCode
        input.nonce = parsed.nonce
        input.deviceName = parsed.deviceName
        input.profile = parsed.user.map(ClientProfile.init)
        return input
    }
}

extension ClientProfile {
    init(_ user: AppleUserObject) {
        self.init(givenName: user.givenName, familyName: user.familyName, email: user.email)
    }
}
