import HTTPServer
/// A checked `GET /auth/authorize` request (APPLE.md §1.1). Problems with it are shown to the
/// person on an error page and never posted to the `redirect_uri`, as Apple does (TN3107).
struct AuthorizeRequest: Sendable {
    enum ResponseMode: String, Sendable {
        case query
        case fragment
        case formPost = "form_post"
    }

    /// Why a request is refused: the page's title and the OAuth error code under it.
    struct Rejection: Error, Sendable, Equatable {
        let title: String
        let code: String
    }

    static let scopeNames: Set<String> = ["name", "email"]
    /// The parameters carried from the authorize request through the consent form.
    static let carriedParameters = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce"]

    let clientID: String
    let redirectURI: String
    let includesIDToken: Bool
    let responseMode: ResponseMode
    let scopes: [String]
    let state: String?
    let nonce: String?
    /// The request's own parameters, to put back into the consent form unchanged.
    let carried: [(name: String, value: String)]

    var wantsName: Bool { scopes.contains("name") }
    var wantsEmail: Bool { scopes.contains("email") }

    init(_ form: FormFields) throws(Rejection) {
        guard let clientID = form.nonEmpty("client_id") else {
            throw Rejection(title: "Invalid client id or web redirect url.", code: "invalid_request")
        }
        guard let redirectURI = form.nonEmpty("redirect_uri") else {
            throw Rejection(title: "Invalid client id or web redirect url.", code: "invalid_request")
        }
        guard Self.isAcceptableRedirect(redirectURI) else {
            throw Rejection(title: "Invalid web redirect url.", code: "unauthorized_client")
        }
        // `code` or `code id_token` (either order); `id_token` alone is no longer supported.
        let types = Set((form["response_type"] ?? "").split(separator: " ").map(String.init))
        guard types == ["code"] || types == ["code", "id_token"] else {
            throw Rejection(title: "Invalid response type.", code: "unsupported_response_type")
        }
        let scopes = (form["scope"] ?? "").split(separator: " ").map(String.init)
        guard scopes.allSatisfy(Self.scopeNames.contains) else { throw Rejection(title: "Invalid scope.", code: "invalid_scope") }
        let includesIDToken = types.contains("id_token")

        // Any scope needs form_post (the `user` field can travel no other way); an id_token
        // must not go into a query string. Violations get Apple's "Invalid response mode".
        let mode: ResponseMode
        if let given = form.nonEmpty("response_mode") {
            guard let parsed = ResponseMode(rawValue: given) else {
                throw Rejection(title: "Invalid response mode", code: "invalid_request")
            }
            mode = parsed
        } else if !scopes.isEmpty {
            mode = .formPost
        } else {
            mode = includesIDToken ? .fragment : .query
        }
        if !scopes.isEmpty && mode != .formPost { throw Rejection(title: "Invalid response mode", code: "invalid_request") }
        if includesIDToken && mode == .query { throw Rejection(title: "Invalid response mode", code: "invalid_request") }

        self.clientID = clientID
        self.redirectURI = redirectURI
        self.includesIDToken = includesIDToken
        self.responseMode = mode
        self.scopes = scopes
        self.state = form.nonEmpty("state")
        self.nonce = form.nonEmpty("nonce")
        self.carried = Self.carriedParameters.compactMap { name in form[name].map { (name, $0) } }
    }

    /// Apple accepts only registered https URLs with a domain; the simulator takes any https
    /// URL, and plain http to loopback so it works on a developer's machine. Never a fragment.
    static func isAcceptableRedirect(_ uri: String) -> Bool {
        guard !uri.contains("#"), !uri.contains(where: { $0 == " " || $0.isNewline }) else { return false }
        let lower = uri.lowercased()
        let rest: Substring
        let secure: Bool
        if lower.hasPrefix("https://") {
            rest = lower.dropFirst(8)
            secure = true
        } else if lower.hasPrefix("http://") {
            rest = lower.dropFirst(7)
            secure = false
        } else {
            return false
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.isEmpty, !authority.contains("@") else { return false }
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[...close]
        } else {
            host = authority.prefix { $0 != ":" }
        }
        guard !host.isEmpty else { return false }
        if secure { return true }
        return host == "localhost" || host == "[::1]" || host.hasPrefix("127.")
    }
}
