import HTTPServer
import JSON
import Logging
import Store

/// The web flow (SPEC §4 "Web flow", §7 "Web"): `GET /auth/apple/login` sends the browser to
/// Apple with a fresh state and nonce and a binding cookie; `POST /auth/apple/callback` takes
/// Apple's `form_post` back, checks the state (known, unused, unexpired, bound to this browser),
/// signs in with the id_token whose nonce must be the stored one, exchanges the code with
/// `redirect_uri`, and lands on `return_to` with the session cookie. Any callback uses up its
/// state; a failure is an HTML page and creates no user and no session.
struct WebSignIn: Sendable {
    let configuration: Configuration
    let store: WebSignInStore
    let signIn: SignIn
    let cookies: SessionCookies
    let logger: Logger
    let clock: @Sendable () -> Int64

    // MARK: - Login

    func login(_ request: HTTPRequest) async -> HTTPResponse {
        guard let query = try? FormFields(parsing: request.query ?? "") else {
            return .error(400, code: "invalid_request", description: "the query string is malformed")
        }
        guard let returnTo = ReturnTo.validate(query["return_to"] ?? ReturnTo.defaultPath, allowedOrigins: configuration.allowedReturnOrigins)
        else {
            return .error(400, code: "invalid_request", description: "return_to must be a path on this site or a URL of an allowed origin")
        }
        guard let clientID = configuration.webClientID else {
            return Pages.error(500, title: "Sign in is not set up", message: "The server has no web_client_id (Services ID) configured.")
        }
        let started: WebSignInStore.Started
        do {
            started = try await store.start(returnTo: returnTo, now: clock())
        } catch {
            logger.error("web sign-in could not be started", metadata: ["error": "\(error)", "request_id": .string(request.requestID)])
            return Pages.error(500, title: "Sign in is unavailable", message: "Please try again in a moment.")
        }
        // `code id_token` with `form_post`: the only mode that carries scopes and the one-time
        // `user` field (APPLE.md §1.1).
        let parameters = FormFields(fields: [
            ("response_type", "code id_token"), ("response_mode", "form_post"), ("scope", "name email"),
            ("client_id", clientID), ("redirect_uri", configuration.redirectURI), ("state", started.state),
            ("nonce", started.nonce),
        ])
        var response = HTTPResponse(status: 302, headers: [
            "Location": configuration.appleBaseURL + "/auth/authorize?" + parameters.encoded(), "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
        ])
        response.headers.add("Set-Cookie", cookies.binding(started.binding))
        return response
    }

    // MARK: - Callback

    /// Why a callback fails, as the status and words of its error page (SPEC §7: state, binding
    /// cookie and nonce failures are 400; Apple refusing the code 401; Apple unreachable 502).
    enum Failure: Error {
        case malformed
        case unknownState
        case expiredState
        case bindingMissing
        case bindingMismatch
        case signIn(SignIn.Failure)

        var status: Int {
            switch self {
            case .malformed, .unknownState, .expiredState, .bindingMissing, .bindingMismatch: 400
            case .signIn(let failure):
                switch failure {
                case .invalidRequest, .invalidToken: 400
                case .invalidGrant: 401
                case .appleUnavailable, .keysUnavailable: 502
                case .internalError: 500
                }
            }
        }

        var page: (title: String, message: String) {
            switch self {
            case .malformed: ("Sign in failed", "The answer from Apple was incomplete. Please sign in again.")
            case .unknownState: ("Sign in failed", "This sign-in link was already used or was never issued. Please sign in again.")
            case .expiredState: ("Sign in expired", "Signing in took longer than ten minutes. Please sign in again.")
            case .bindingMissing, .bindingMismatch:
                ("Sign in failed", "This sign-in was started in another browser, or your browser did not keep its cookie. Please sign in again here.")
            case .signIn(let failure):
                switch failure {
                case .invalidToken(let reason):
                    reason == .nonceMismatch || reason == .nonceMissing
                        ? ("Sign in failed", "Apple's answer does not belong to this sign-in. Please sign in again.")
                        : ("Sign in failed", "Apple's answer could not be verified. Please sign in again.")
                case .invalidRequest: ("Sign in failed", "The answer from Apple was incomplete. Please sign in again.")
                case .invalidGrant: ("Sign in refused", "Apple did not accept this sign-in. Please sign in again.")
                case .appleUnavailable, .keysUnavailable: ("Apple is unavailable", "Apple could not be reached. Please try again in a moment.")
                case .internalError: ("Sign in failed", "Your sign-in could not be saved. Please try again.")
                }
            }
        }
    }

    func callback(_ request: HTTPRequest) async -> HTTPResponse {
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
            let result: SignIn.Success
            do throws(SignIn.Failure) {
                result = try await signIn.run(input, requestID: request.requestID)
            } catch {
                throw .signIn(error)
            }
            return Pages.seeOther(pending.returnTo, headers: [clearBinding, ("Set-Cookie", cookies.session(result.session))])
        } catch {
            logger.info("web sign-in refused", metadata: ["reason": "\(error)", "request_id": .string(request.requestID)])
            var response = Pages.error(error.status, title: error.page.title, message: error.page.message)
            response.headers.add(clearBinding.0, clearBinding.1)
            return response
        }
    }

    /// The state and the binding cookie, then the sign-in input with the stored nonce.
    private func check(_ fields: FormFields?, request: HTTPRequest) async throws(Failure) -> (PendingWebSignIn, SignIn.Input) {
        guard let fields, let state = fields.nonEmpty("state") else { throw .malformed }
        let consumed: WebSignInStore.Consumed
        do {
            consumed = try await store.consume(state: state, now: clock())
        } catch {
            throw .signIn(.internalError)
        }
        let pending: PendingWebSignIn
        switch consumed {
        case .unknown: throw .unknownState
        case .expired: throw .expiredState
        case .found(let found): pending = found
        }
        guard let binding = SessionAuthenticator.cookie(SessionCookies.bindingName, in: request.headers.values("Cookie")) else {
            throw .bindingMissing
        }
        guard pending.isBound(to: binding) else { throw .bindingMismatch }
        guard let token = fields.nonEmpty("id_token"), let code = fields.nonEmpty("code") else { throw .malformed }
        var input = SignIn.Input(identityToken: token, authorizationCode: code, nonce: pending.nonce)
        input.deviceName = DeviceName.describe(userAgent: request.headers["User-Agent"])
        // Apple's one-time `user`: a JSON string inside the form field (APPLE.md §1.2).
        if let user = fields.nonEmpty("user"), let object = try? JSONParser.parse(user).object {
            input.profile = ClientProfile(AppleUserObject(object))
        }
        return (pending, input)
    }
}

/// Where the web flow may send people back to (SPEC §7): a path starting with a single `/`, or
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
