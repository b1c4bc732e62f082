import Accounts
import HTTPServer
import JSON
import Logging
import Store

/// The one place where a failure becomes a response: every failure type of the application,
/// with its status, code and words (docs/reference/http-api.md for the API, docs/reference/http-api.md for the web flow's pages).
/// Failures that carry a cause (a sign-in's storage error) are answered by their cause, so a
/// database that cannot be reached is 503 `database_unavailable` on every route, whichever
/// layer met it (docs/reference/http-api.md). An error no case knows is a bug or a fault: a 500, logged with the
/// request id.
struct ErrorResponses: Sendable {
    let logger: Logger

    func response(for error: any Error, request: HTTPRequest?) -> HTTPResponse {
        switch error {
        case let shown as ShownAsPage:
            var response = page(for: shown.error, request: request)
            for (name, value) in shown.headers { response.headers.add(name, value) }
            return response
        case let refusal as HTTPRefusal:
            var response = json(refusal.status, code: refusal.code, description: refusal.reason)
            for (name, value) in refusal.headers { response.headers.add(name, value) }
            return response
        case let refusal as APIError:
            var response = json(refusal.status, code: refusal.code, description: refusal.description)
            for (name, value) in refusal.headers { response.headers.add(name, value) }
            return response
        case let refusal as SessionAuthenticator.Refusal:
            switch refusal {
            case .unauthenticated:
                // RFC 6750 §3: a bearer-protected resource names its scheme when it refuses.
                var response = json(401, code: "unauthenticated", description: "no live session")
                response.headers.add("WWW-Authenticate", "Bearer")
                return response
            case .forbidden: return json(403, code: "forbidden", description: "a cookie-authenticated change must come from this site's origin or one listed in cors_origins")
            }
        case let failure as SignIn.Failure:
            switch failure {
            case .invalidRequest(let text): return json(400, code: "invalid_request", description: text)
            case .invalidToken(let reason): return json(401, code: "invalid_token", description: reason.rawValue)
            case .invalidGrant: return json(401, code: "invalid_grant", description: "Apple refused the authorization code")
            case .appleUnavailable: return json(502, code: "apple_unavailable", description: "Apple could not be reached; try again")
            case .keysUnavailable: return json(503, code: "keys_unavailable", description: "Apple's signing keys are not available yet")
            case .accountExists:
                return json(409, code: "account_exists", description: "this email belongs to an account with a password: sign in with it, then add Sign in with Apple")
            case .binding(let conflict): return response(for: conflict)
            case .storage(let cause): return response(for: cause, request: request)
            }
        case is ExternalIDTaken:
            return json(409, code: "conflict", description: "another user already has this external_id")
        case let failure as PasswordFailure:
            return response(for: failure)
        case StoreError.unavailable:
            return json(503, code: "database_unavailable", description: "the database is unavailable; try again shortly")
        case let failure as NotificationProcessor.Refusal:
            switch failure {
            case .malformed: return json(400, code: "invalid_request", description: "the body must be a JSON object with a string \"payload\"")
            case .invalidToken(let reason): return json(400, code: "invalid_token", description: reason.rawValue)
            }
        default:
            logUnexpected(error, request: request)
            return json(500, code: "internal_error", description: "the request could not be completed; nothing was changed")
        }
    }

    /// docs/guides/passwords-and-email.md's refusals.
    func response(for failure: PasswordFailure) -> HTTPResponse {
        let code = Self.code(failure)
        switch failure {
        case .invalidRequest(let text): return json(400, code: code, description: text)
        case .weakPassword(let text): return json(400, code: code, description: text)
        case .accountExists: return json(409, code: code, description: "an account with this email exists")
        case .invalidCredentials: return json(401, code: code, description: "the email or password is wrong")
        case .tooManyAttempts(let seconds):
            var response = json(429, code: code, description: "too many failed attempts; retry after \(seconds) s")
            response.headers.add("Retry-After", String(seconds))
            return response
        case .busy: return json(503, code: code, description: "too many passwords are being checked; try again shortly")
        case .reauthenticationRequired:
            return json(403, code: code, description: "sign in again: this needs a session made in the last 10 minutes")
        case .notConfigured: return json(503, code: code, description: "codes need smtp_url or webhook_url to be delivered")
        case .invalidGrant: return json(400, code: code, description: "the reset code is wrong, used or expired")
        case .lastSignInMethod: return json(409, code: code, description: "this is the account's only way to sign in")
        case .emailUnverified: return json(403, code: code, description: "verify the account's email address first")
        }
    }

    /// The stable code of a password refusal: the API's `error`, and the `error=` with which
    /// a page's form sends the browser back (the page says it in words).
    static func code(_ failure: PasswordFailure) -> String {
        switch failure {
        case .invalidRequest: "invalid_request"
        case .weakPassword: "weak_password"
        case .accountExists: "account_exists"
        case .invalidCredentials: "invalid_credentials"
        case .tooManyAttempts: "too_many_attempts"
        case .busy: "busy"
        case .reauthenticationRequired: "reauthentication_required"
        case .notConfigured: "not_configured"
        case .invalidGrant: "invalid_grant"
        case .lastSignInMethod: "last_sign_in_method"
        case .emailUnverified: "email_unverified"
        }
    }

    /// Binding an Apple ID refused (the upgrade, linking).
    func response(for conflict: PasswordAccountConflict) -> HTTPResponse {
        switch conflict {
        case .appleIDInUse: return json(409, code: "apple_id_in_use", description: "this Apple ID belongs to another account")
        case .otherAppleID: return json(409, code: "conflict", description: "this account has another Apple ID; remove it first")
        case .passwordChanged: return response(for: PasswordFailure.invalidCredentials)
        case .accountExists: return response(for: PasswordFailure.accountExists)
        case .lastSignInMethod: return response(for: PasswordFailure.lastSignInMethod)
        case .emailUnverified: return response(for: PasswordFailure.emailUnverified)
        case .noEmail: return json(400, code: "invalid_request", description: "the account has no email address to sign in with")
        case .userGone:
            var response = json(401, code: "unauthenticated", description: "no live session")
            response.headers.add("WWW-Authenticate", "Bearer")
            return response
        }
    }

    /// A failure on a browser route: its page, or for API-shaped refusals their JSON.
    private func page(for error: any Error, request: HTTPRequest?) -> HTTPResponse {
        let language = request.map(PageLanguage.init) ?? .english
        switch error {
        case let refusal as PageError:
            return Pages.error(refusal.status, title: refusal.title, message: refusal.message, language: language)
        case WebSignIn.Failure.signIn(.storage(let cause)):
            return page(for: cause, request: request)
        case let failure as WebSignIn.Failure:
            let (status, title, message) = Self.page(for: failure)
            return Pages.error(status, title: title, message: message, language: language)
        case StoreError.unavailable:
            let unavailable = PageError.databaseUnavailable
            return Pages.error(unavailable.status, title: unavailable.title, message: unavailable.message, language: language)
        case is APIError, is HTTPRefusal:
            return response(for: error, request: request)
        default:
            logUnexpected(error, request: request)
            return Pages.error(500, title: .errorUnexpected, message: .errorNothingChanged, language: language)
        }
    }

    /// docs/reference/http-api.md: state, binding cookie and nonce failures are 400; Apple refusing the code 401;
    /// Apple unreachable 502 (the page cannot say 503, the browser would not retry anyway).
    static func page(for failure: WebSignIn.Failure) -> (status: Int, title: PageText, message: PageText) {
        switch failure {
        case .malformed: return (400, .signInFailed, .signInIncomplete)
        case .unknownState: return (400, .signInFailed, .signInUnknownState)
        case .expiredState: return (400, .signInExpired, .signInTookTooLong)
        case .bindingMissing, .bindingMismatch: return (400, .signInFailed, .signInOtherBrowser)
        case .signIn(let failure):
            switch failure {
            case .invalidToken(let reason) where reason == .nonceMismatch || reason == .nonceMissing:
                return (400, .signInFailed, .signInNotThisSignIn)
            case .invalidToken: return (400, .signInFailed, .signInUnverified)
            case .invalidRequest: return (400, .signInFailed, .signInIncomplete)
            case .invalidGrant: return (401, .signInRefused, .signInAppleRefused)
            case .appleUnavailable, .keysUnavailable: return (502, .appleUnavailable, .appleUnreachable)
            case .accountExists: return (409, .accountExistsTitle, .accountExistsMessage)
            case .binding(.appleIDInUse): return (409, .appleIDInUseTitle, .appleIDInUseMessage)
            case .binding(.otherAppleID): return (409, .appleNotAdded, .appleOtherAppleID)
            case .binding(.emailUnverified): return (403, .appleNotAdded, .appleEmailUnverified)
            case .binding: return (400, .appleNotAdded, .appleSessionEnded)
            case .storage: return (500, .signInFailed, .signInNotSaved)
            }
        }
    }

    /// docs/reference/http-api.md's error shape: `{"error": CODE, "error_description": TEXT}`.
    func json(_ status: Int, code: String, description: String) -> HTTPResponse {
        let body = JSONValue.object(JSONObject([("error", .string(code)), ("error_description", .string(description))]))
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(body))
    }

    /// The error's own words may name a table or a file, never a secret: handlers do not put
    /// request values into errors.
    private func logUnexpected(_ error: any Error, request: HTTPRequest?) {
        logger.error("request failed", metadata: [
            "error": "\(error)", "path": .string(request?.path ?? "-"), "request_id": .string(request?.requestID ?? "-"),
        ])
    }
}
