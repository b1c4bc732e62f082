import Accounts
import HTTPServer
import JSON
import Logging
import Store

/// The web flow (docs/reference/http-api.md "Web flow", §7 "Web"): `GET /auth/apple/login` sends the browser to
/// Apple with a fresh state and nonce and a binding cookie; `POST /auth/apple/callback` takes
/// Apple's `form_post` back, checks the state (known, unused, unexpired, bound to this browser),
/// signs in with the id_token whose nonce must be the stored one, exchanges the code with
/// `redirect_uri`, and lands on `return_to` with the session cookie. Any callback that can be
/// read uses up its state; a failure is an HTML page and creates no user and no session.
struct WebSignIn: Sendable {
    let configuration: Configuration
    let store: WebSignInStore
    /// Whose session started a link.
    let sessions: SessionStore
    let signIn: SignIn
    let cookies: SessionCookies
    let logger: Logger
    let clock: @Sendable () -> Int64

    // MARK: - Login

    func login(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let query = try? FormFields(parsing: request.query ?? "") else {
            throw APIError.invalidRequest("the query string is malformed")
        }
        var (returnTo, codeChallenge) = try Self.destination(query, configuration: configuration)
        // The sign-in page's button carries a language chosen with `?lang=` to the default
        // return, the account page (Apple's callback itself carries none).
        if query["return_to"] == nil { returnTo = PageLanguage(request).carried(returnTo) }
        return try await redirectToApple(status: 302, returnTo: returnTo, codeChallenge: codeChallenge, linkSessionID: nil)
    }

    /// "Add Sign in with Apple" (docs/guides/passwords-and-email.md): the same trip to Apple, whose state remembers the
    /// session it links for (Apple's callback is a cross-site POST, which carries no session
    /// cookie). Back on `/account`, in the language the account page chose.
    func startLink(sessionID: String, language: PageLanguage) async throws -> HTTPResponse {
        try await redirectToApple(status: 302, returnTo: language.carried(Self.linkedReturn), codeChallenge: nil, linkSessionID: sessionID)
    }

    static let linkedReturn = "/account?linked=1"

    private func redirectToApple(status: Int, returnTo: String, codeChallenge: String?, linkSessionID: String?) async throws -> HTTPResponse {
        guard let clientID = configuration.webClientID else { throw PageError.webSignInNotConfigured }
        let started = try await store.start(returnTo: returnTo, codeChallenge: codeChallenge, linkSessionID: linkSessionID, now: clock())
        // `code id_token` with `form_post`: the only mode that carries scopes and the one-time
        // `user` field (APPLE.md §1.1).
        let parameters = FormFields(fields: [
            ("response_type", "code id_token"), ("response_mode", "form_post"), ("scope", "name email"),
            ("client_id", clientID), ("redirect_uri", configuration.redirectURI), ("state", started.state),
            ("nonce", started.nonce),
        ])
        var response = HTTPResponse(status: status, headers: [
            "Location": configuration.appleBaseURL + "/auth/authorize?" + parameters.encoded(), "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
        ])
        response.headers.add("Set-Cookie", cookies.binding(started.binding))
        return response
    }

    /// Where the sign-in returns: a page of this site or an allowed origin, or an app URL with
    /// its PKCE challenge (docs/guides/connecting-your-backend.md), which such a return requires.
    static func destination(_ query: FormFields, configuration: Configuration) throws -> (returnTo: String, codeChallenge: String?) {
        let requested = query["return_to"] ?? ReturnTo.defaultPath
        let challenge = query["code_challenge"], method = query["code_challenge_method"]
        if let appURL = AppReturn.appURL(requested, allowedSchemes: configuration.allowedReturnSchemes) {
            guard let challenge, AppReturn.isChallenge(challenge) else {
                throw APIError.invalidRequest("returning to an app needs code_challenge: base64url of the SHA-256 of the code verifier (RFC 7636 S256)")
            }
            guard method == "S256" else { throw APIError.invalidRequest("code_challenge_method must be S256") }
            return (appURL, challenge)
        }
        guard challenge == nil, method == nil else {
            throw APIError.invalidRequest("code_challenge is only for a return_to whose scheme is in allowed_return_schemes")
        }
        guard let returnTo = ReturnTo.validate(requested, allowedOrigins: configuration.allowedReturnOrigins) else {
            throw APIError.invalidRequest("return_to must be a path on this site, a URL of an allowed origin, or an app URL of an allowed scheme")
        }
        return (returnTo, nil)
    }

    // MARK: - Callback

    /// Why a callback fails; `ErrorResponses` has the status and words of each page.
    enum Failure: Error {
        case malformed
        case unknownState
        case expiredState
        case bindingMissing
        case bindingMismatch
        case signIn(SignIn.Failure)
    }

    func callback(_ request: HTTPRequest) async throws -> HTTPResponse {
        let fields = try? FormFields(parsing: request.body)
        // Whatever happens next, the state is used up and the binding cookie goes.
        let clearBinding = ("Set-Cookie", cookies.clearBinding())
        if let fields, fields["error"] != nil {
            if let state = fields.nonEmpty("state") { _ = try? await store.consume(state: state, now: clock()) }
            let error = fields["error"] ?? ""
            if error != "user_cancelled_authorize" {
                logger.notice("Apple answered the web sign-in with an error", metadata: ["apple_error": .string(String(error.prefix(64)))])
            }
            return Pages.seeOther("/?error=cancelled", headers: [clearBinding])
        }
        do throws(Failure) {
            let (pending, input) = try await check(fields, request: request)
            if let sessionID = pending.linkSessionID {
                try await link(input, sessionID: sessionID, requestID: request.requestID)
                return Pages.seeOther(pending.returnTo, headers: [clearBinding])
            }
            if let challenge = pending.codeChallenge {
                // Back to the app with a one-time code and no cookie: the app makes its session.
                let (code, grant) = AppReturn.newCode(challenge: challenge, now: clock())
                do throws(SignIn.Failure) {
                    _ = try await signIn.runReturningToApp(input, grant: grant, requestID: request.requestID)
                } catch {
                    throw .signIn(error)
                }
                return Pages.seeOther(AppReturn.url(pending.returnTo, adding: code), headers: [clearBinding])
            }
            let result: SignIn.Success
            do throws(SignIn.Failure) {
                result = try await signIn.run(input, requestID: request.requestID)
            } catch {
                throw .signIn(error)
            }
            return Pages.seeOther(pending.returnTo, headers: [clearBinding, ("Set-Cookie", cookies.session(result.session))])
        } catch {
            logger.info("web sign-in refused", metadata: ["reason": "\(error)", "request_id": .string(request.requestID)])
            throw ShownAsPage(error: error, headers: [clearBinding])
        }
    }

    /// Links the Apple ID to the user of the session that started the link, if it is still live.
    private func link(_ input: SignIn.Input, sessionID: String, requestID: String) async throws(Failure) {
        let userID: String?
        do {
            userID = try await sessions.owner(sessionID: sessionID, now: clock())
        } catch {
            throw .signIn(.storage(error))
        }
        guard let userID else { throw .signIn(.binding(.userGone)) }
        do throws(SignIn.Failure) {
            _ = try await signIn.bind(input, userID: userID, removingPassword: nil, makesSession: false, sessionID: sessionID, requestID: requestID)
        } catch {
            throw .signIn(error)
        }
    }

    /// The state and the binding cookie, then the sign-in input with the stored nonce.
    private func check(_ fields: FormFields?, request: HTTPRequest) async throws(Failure) -> (PendingWebSignIn, SignIn.Input) {
        guard let fields, let state = fields.nonEmpty("state") else { throw .malformed }
        // Apple's one-time `user`: a JSON string inside the form field (APPLE.md §1.2). One that
        // does not read (a U+0000 in it, say) is refused as the unreadable form is, before the
        // state is used up or anything goes to Apple.
        var profile: ClientProfile?
        if let user = fields.nonEmpty("user") {
            guard let object = try? JSONParser.parse(user).object else { throw .malformed }
            profile = ClientProfile(AppleUserObject(object))
        }
        let consumed: WebSignInStore.Consumed
        do {
            consumed = try await store.consume(state: state, now: clock())
        } catch {
            throw .signIn(.storage(error))
        }
        let pending: PendingWebSignIn
        switch consumed {
        case .unknown: throw .unknownState
        case .expired: throw .expiredState
        case .found(let found): pending = found
        }
        guard let binding = SessionCookies.read(SessionCookies.bindingName, from: request) else {
            throw .bindingMissing
        }
        guard pending.isBound(to: binding) else { throw .bindingMismatch }
        guard let token = fields.nonEmpty("id_token"), let code = fields.nonEmpty("code") else { throw .malformed }
        var input = SignIn.Input(identityToken: token, authorizationCode: code, nonce: pending.nonce)
        input.deviceName = DeviceName.describe(userAgent: request.headers["User-Agent"])
        input.locale = RequestLocale.of(request)
        input.profile = profile
        input.method = .web
        input.audit = AuditContext(request, trusted: configuration.trustedProxies)
        return (pending, input)
    }
}

/// Where the web flow may send people back to (docs/reference/http-api.md): a path starting with a single `/`, or
/// an absolute URL whose origin is allowed. Anything else (`//host`, `/\host`, other schemes,
/// control characters) is refused: it would make this server an open redirect.
enum ReturnTo {
    static let defaultPath = "/account"

    static func validate(_ text: String, allowedOrigins: [String]) -> String? {
        guard !text.isEmpty, text.utf8.count <= 2048,
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\\" })
        else { return nil }
        if text.hasPrefix("/") {
            return text.hasPrefix("//") ? nil : text
        }
        guard let url = try? SettingURL.parse(text), allowedOrigins.contains(url.origin) else { return nil }
        return text
    }
}
