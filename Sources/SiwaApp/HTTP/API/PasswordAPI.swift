import Accounts
import HTTPServer
import JSON
import Store

/// docs/guides/passwords-and-email.md's routes: password accounts (sign-up, sign-in, set or change, reset, remove), the
/// upgrade to Sign in with Apple, and linking an Apple ID to the signed-in user.
struct PasswordAPI: Sendable {
    let accounts: PasswordAccounts
    let signIn: SignIn
    let clock: @Sendable () -> Int64
    let cookies: SessionCookies
    let trustedProxies: CIDRSet

    func signUp(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        let (given, family) = try body.name()
        let made = try await accounts.signUp(
            email: try body.required("email"),
            password: try body.required("password"),
            givenName: given, familyName: family,
            deviceName: try body.deviceName(), locale: RequestLocale.of(request), audit: audit(request))
        return signedIn(made.user, made.session, created: true, status: 201, request: request)
    }

    func passwordSignIn(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        let made = try await accounts.signIn(
            email: try body.required("email"),
            password: try body.required("password"),
            deviceName: try body.deviceName(),
            client: client(of: request), audit: audit(request))
        return signedIn(made.user, made.session, created: false, status: 200, request: request)
    }

    func setPassword(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        try await accounts.setPassword(
            for: found.live, current: try body.optional("current_password"),
            new: try body.required("new_password"), client: client(of: request), audit: audit(request, found))
        return HTTPResponse(status: 204)
    }

    func removePassword(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        return Self.user(try await accounts.removePassword(userID: found.user.id, sessionID: found.session.id, audit: audit(request, found)))
    }

    func resetRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        try accounts.requestReset(email: try body.required("email"))
        // Alike whether or not the email has a password, and at once: the lookup runs after
        // the answer, so neither its body nor its time reveals an account.
        let answer = JSONValue.object(JSONObject([("status", .string("accepted"))]))
        return HTTPResponse(status: 202, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(answer))
    }

    /// `POST /api/auth/email/verify`: no session needed, the code is the proof.
    func verifyEmail(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        return Self.user(try await accounts.verifyEmail(code: try body.required("code"), audit: audit(request)))
    }

    /// `POST /api/account/email/verify-request`: a new code for the signed-in user's email.
    /// Answered after its work, unlike a reset request: the caller asks about their own email,
    /// whose state `/api/me` shows anyway, so the time tells nothing, and an outage stays a 503.
    func verifyRequest(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        try await accounts.requestVerification(userID: found.user.id)
        let answer = JSONValue.object(JSONObject([("status", .string("accepted"))]))
        return HTTPResponse(status: 202, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(answer))
    }

    func reset(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        try await accounts.reset(
            code: try body.required("code"),
            newPassword: try body.required("new_password"), audit: audit(request))
        return HTTPResponse(status: 204)
    }

    /// `POST /api/auth/apple/upgrade`: the password as a password sign-in checks it, then the
    /// identity token as a native sign-in checks it; in one transaction the Apple ID is bound,
    /// the password removed and a session made.
    func upgrade(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.parse(request)
        var input = try Self.appleInput(body)
        input.method = .upgrade
        input.audit = audit(request)
        let (checked, keys) = try await accounts.checkPassword(
            email: try body.required("email"),
            password: try body.required("password"),
            client: client(of: request), audit: input.audit)
        // The password was right: not a failure to count, whatever the token turns out to be.
        try await accounts.store.releasePasswordAttempt(keys)
        let bound = try await signIn.bind(
            input, userID: checked.credential.userID, removingPassword: checked.credential.hash, makesSession: true,
            requestID: request.requestID)
        // `makesSession` promises one; should the store break that promise, say so plainly.
        guard let session = bound.session else {
            throw APIError(status: 500, code: "internal_error", description: "the upgrade made no session")
        }
        return signedIn(bound.user, session, created: false, status: 200, request: request)
    }

    /// `POST /api/account/apple`: links the token's Apple ID to the signed-in user.
    func link(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        guard found.session.createdAt > clock() - PasswordAccounts.recentSignIn else {
            throw PasswordFailure.reauthenticationRequired
        }
        var input = try Self.appleInput(try Self.parse(request))
        input.audit = audit(request, found)
        let bound = try await signIn.bind(input, userID: found.user.id, removingPassword: nil, makesSession: false, requestID: request.requestID)
        return Self.user(bound.user)
    }

    /// `DELETE /api/account/apple`: unlinks it; its tokens go to the durable revocation queue,
    /// due at once (the queue's worker looks every second).
    func unlink(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        let now = clock()
        let user: UserRecord
        do {
            user = try await accounts.store.unbindAppleID(
                userID: found.user.id, sessionID: found.session.id, now: now, firstAttemptAt: now, audit: audit(request, found))
        } catch PasswordAccountConflict.lastSignInMethod {
            throw PasswordFailure.lastSignInMethod
        }
        return Self.user(user)
    }

    // MARK: - Helpers

    private func signedIn(_ user: UserRecord, _ session: NewSession, created: Bool, status: Int, request: HTTPRequest) -> HTTPResponse {
        var response = NativeSignInAPI.response(user: user, session: session, created: created)
        response.status = status
        if cookies.isSameOrigin(request) { response.headers.add("Set-Cookie", cookies.session(session)) }
        return response
    }

    static func user(_ user: UserRecord) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(UserJSON.value(user)))
    }

    private func audit(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated? = nil) -> AuditContext {
        AuditContext(request, trusted: trustedProxies, sessionID: found?.session.id)
    }

    private func client(of request: HTTPRequest) -> String {
        ClientAddress.attemptKey(of: request, trusted: trustedProxies)
    }

    private static func parse(_ request: HTTPRequest) throws -> PasswordRequestBody {
        try PasswordRequestBody(parsing: request.body)
    }

    /// The Apple half of an upgrade or link, read as the native sign-in reads its body.
    private static func appleInput(_ body: PasswordRequestBody) throws -> SignIn.Input {
        var input = SignIn.Input(identityToken: try body.required("identity_token"))
        input.authorizationCode = try body.optional("authorization_code")
        input.nonce = try body.optional("nonce")
        input.deviceName = try body.deviceName()
        return input
    }
}
