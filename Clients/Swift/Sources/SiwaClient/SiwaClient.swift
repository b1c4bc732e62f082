import Foundation

/// The app's side of siwa-server: every route an app calls, as async throwing calls, with the
/// session kept in a `SessionStore`. One instance per server; safe to share.
///
/// At launch, call `checkCredentialState()` and keep `watchCredentialRevocations()` running:
/// when Apple says the person revoked Sign in with Apple, the server session ends and the store
/// is cleared.
public actor SiwaClient {
    public nonisolated let baseURL: URL
    let store: any SessionStore
    let transport: any HTTPTransport
    nonisolated let credentialStateProvider: (any CredentialStateProvider)?
    let deviceName: String?
    let accessTokenMargin: TimeInterval
    let now: @Sendable () -> Date
    var cachedAccessToken: IssuedAccessToken?
    var accessTokenFetch: (sessionToken: String, task: Task<IssuedAccessToken, any Error>)?

    /// - Parameters:
    ///   - baseURL: the server's public URL (`public_url`).
    ///   - store: where the session is kept (`KeychainSessionStore` in apps).
    ///   - credentialStateProvider: Apple's credential state (`AppleIDCredentialStateProvider`).
    ///   - deviceName: shown in the user's session list.
    ///   - accessTokenMargin: an access token is replaced this long before its `exp`.
    ///   - now: the clock; tests hold it.
    public init(
        baseURL: URL, store: any SessionStore = MemorySessionStore(), credentialStateProvider: (any CredentialStateProvider)? = nil,
        deviceName: String? = nil, transport: any HTTPTransport = URLSessionTransport(), accessTokenMargin: TimeInterval = 30,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.baseURL = baseURL
        self.store = store
        self.credentialStateProvider = credentialStateProvider
        self.deviceName = deviceName
        self.transport = transport
        self.accessTokenMargin = accessTokenMargin
        self.now = now
    }

    // MARK: State

    /// The stored session, if any (it may have ended on the server; `me()` tells).
    public var session: StoredSession? {
        get async throws { try await loadState().session }
    }

    public var isSignedIn: Bool {
        get async throws { try await loadState().session != nil }
    }

    /// Apple's one-time name and email still waiting for the server, if any.
    public var pendingProfile: PendingProfile? {
        get async throws { try await loadState().pendingProfile }
    }

    // MARK: Sign in with Apple

    /// A nonce issued by the server (optional: `AppleNonce()` makes one on the device).
    public func serverNonce() async throws -> ServerNonce {
        try decode(ServerNonce.self, from: try await call("POST", "/api/auth/apple/nonce", expect: [201]))
    }

    /// Signs in with the credential Apple gave. Its one-time name and email are kept in the store
    /// first, and sent again with a later sign-in of the same Apple ID if this one fails.
    /// - Parameter nonce: the raw nonce whose hash the Apple request carried.
    @discardableResult
    public func signIn(with credential: AppleCredential, nonce: String?) async throws -> SignInResult {
        var state = try await loadState()
        if let profile = credential.profile {
            state.pendingProfile = profile
            try await save(state)
        }
        let pending = state.pendingProfile?.appleUserID == credential.user ? state.pendingProfile : nil
        var user: JSONValue?
        if let pending {
            var object: [String: JSONValue] = [:]
            if let name = pending.name {
                object["name"] = Self.object(["firstName": name.given.map(JSONValue.string), "lastName": name.family.map(JSONValue.string)])
            }
            if let email = pending.email { object["email"] = .string(email) }
            user = .object(object)
        }
        let body = Self.object([
            "identity_token": .string(credential.identityToken), "authorization_code": credential.authorizationCode.map(JSONValue.string),
            "nonce": nonce.map(JSONValue.string), "user": user, "device_name": deviceName.map(JSONValue.string),
        ])
        let result = try decode(SignInResult.self, from: try await call("POST", "/api/auth/apple", body: body, expect: [200]))
        try await adopt(result, confirming: credential.user)
        return result
    }

    /// A password account's upgrade to Sign in with Apple: the password and the credential are
    /// checked together, the Apple ID bound and the password removed.
    @discardableResult
    public func upgrade(email: String, password: String, credential: AppleCredential, nonce: String?) async throws -> SignInResult {
        let body = Self.object([
            "email": .string(email), "password": .string(password), "identity_token": .string(credential.identityToken),
            "authorization_code": credential.authorizationCode.map(JSONValue.string), "nonce": nonce.map(JSONValue.string),
            "device_name": deviceName.map(JSONValue.string),
        ])
        let result = try decode(SignInResult.self, from: try await call("POST", "/api/auth/apple/upgrade", body: body, expect: [200]))
        try await adopt(result, confirming: credential.user)
        return result
    }

    /// Binds an Apple ID to the signed-in user (a session made in the last ten minutes).
    @discardableResult
    public func linkApple(_ credential: AppleCredential, nonce: String?) async throws -> User {
        let body = Self.object([
            "identity_token": .string(credential.identityToken), "authorization_code": credential.authorizationCode.map(JSONValue.string),
            "nonce": nonce.map(JSONValue.string),
        ])
        let user = try decode(User.self, from: try await authenticated("POST", "/api/account/apple", body: body, expect: [200]))
        try await remember(user, confirming: credential.user)
        return user
    }

    /// Unbinds the user's Apple ID (refused when it is the only way in: `last_sign_in_method`).
    @discardableResult
    public func unlinkApple() async throws -> User {
        let user = try decode(User.self, from: try await authenticated("DELETE", "/api/account/apple", expect: [200]))
        try await remember(user, confirming: nil)
        return user
    }

    // MARK: Return to the app from a browser

    /// The page to open for a browser sign-in that returns to `returnTo`, with its PKCE verifier.
    public nonisolated func returnToAppSignIn(returnTo: URL) -> ReturnToAppSignIn {
        ReturnToAppSignIn(baseURL: baseURL, returnTo: returnTo)
    }

    /// Trades the one-time code the browser brought back, and the verifier, for a session.
    @discardableResult
    public func exchange(code: String, verifier: String) async throws -> SignInResult {
        let body = Self.object(["code": .string(code), "code_verifier": .string(verifier), "device_name": deviceName.map(JSONValue.string)])
        let result = try decode(SignInResult.self, from: try await call("POST", "/api/auth/exchange", body: body, expect: [200]))
        try await adopt(result, confirming: nil)
        return result
    }

    /// `exchange(code:verifier:)` with the code read from the URL the browser came back with.
    @discardableResult
    public func exchange(callbackURL: URL, signIn: ReturnToAppSignIn) async throws -> SignInResult {
        guard let code = signIn.code(in: callbackURL) else {
            throw SiwaError.invalidInput("the return URL carries no code of this sign-in")
        }
        return try await exchange(code: code, verifier: signIn.verifier)
    }

    // MARK: Passwords

    /// Creates a password account (its email unverified until `verifyEmail(code:)`).
    @discardableResult
    public func signUp(email: String, password: String, name: PersonName? = nil) async throws -> SignInResult {
        let body = Self.object([
            "email": .string(email), "password": .string(password),
            "name": name.map { Self.object(["given": $0.given.map(JSONValue.string), "family": $0.family.map(JSONValue.string)]) },
            "device_name": deviceName.map(JSONValue.string),
        ])
        let result = try decode(SignInResult.self, from: try await call("POST", "/api/auth/password/sign-up", body: body, expect: [201]))
        try await adopt(result, confirming: nil)
        return result
    }

    @discardableResult
    public func signIn(email: String, password: String) async throws -> SignInResult {
        let body = Self.object(["email": .string(email), "password": .string(password), "device_name": deviceName.map(JSONValue.string)])
        let result = try decode(SignInResult.self, from: try await call("POST", "/api/auth/password", body: body, expect: [200]))
        try await adopt(result, confirming: nil)
        return result
    }

    /// Proves the email with the code the server sent (no session needed).
    @discardableResult
    public func verifyEmail(code: String) async throws -> User {
        try decode(User.self, from: try await call("POST", "/api/auth/email/verify", body: Self.object(["code": .string(code)]), expect: [200]))
    }

    /// Asks for a new verification code for the signed-in user's unverified email.
    public func requestEmailVerification() async throws {
        _ = try await authenticated("POST", "/api/account/email/verify-request", expect: [202])
    }

    /// Asks for a reset code (accepted whether or not the email has an account).
    public func requestPasswordReset(email: String) async throws {
        _ = try await call("POST", "/api/auth/password/reset-request", body: Self.object(["email": .string(email)]), expect: [202])
    }

    /// Sets a new password with a reset code; every session of the user ends, this one too.
    public func resetPassword(code: String, newPassword: String) async throws {
        let body = Self.object(["code": .string(code), "new_password": .string(newPassword)])
        _ = try await call("POST", "/api/auth/password/reset", body: body, expect: [204])
    }

    /// Changes the password (`currentPassword` must match), or sets a first one (a session made
    /// in the last ten minutes). Every other session of the user ends.
    public func setPassword(current currentPassword: String?, new newPassword: String) async throws {
        let body = Self.object(["current_password": currentPassword.map(JSONValue.string), "new_password": .string(newPassword)])
        _ = try await authenticated("PUT", "/api/account/password", body: body, expect: [204])
    }

    /// Removes the password (refused when it is the only way in: `last_sign_in_method`).
    @discardableResult
    public func removePassword() async throws -> User {
        try decode(User.self, from: try await authenticated("DELETE", "/api/account/password", expect: [200]))
    }

    // MARK: The account

    /// The signed-in user.
    public func me() async throws -> User {
        let user = try decode(User.self, from: try await authenticated("GET", "/api/me", expect: [200]))
        try await remember(user, confirming: nil)
        return user
    }

    /// Changes the user's language (`en` or `ko`), in which the server writes its mail.
    @discardableResult
    public func updateAccount(locale: String) async throws -> User {
        try decode(User.self, from: try await authenticated("PATCH", "/api/account", body: Self.object(["locale": .string(locale)]), expect: [200]))
    }

    /// The user's live sessions, newest first.
    public func sessions() async throws -> [SessionSummary] {
        struct List: Decodable { let sessions: [SessionSummary] }
        return try decode(List.self, from: try await authenticated("GET", "/api/sessions", expect: [200])).sessions
    }

    /// Ends one of the user's sessions (on another device, or this one).
    public func endSession(id: String) async throws {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        let escaped = id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
        _ = try await authenticated("DELETE", "/api/sessions/\(escaped)", expect: [204])
    }

    /// The user's own activity (sign-ins, sessions ended, changes), newest first.
    public func activity(limit: Int? = nil, cursor: String? = nil) async throws -> ActivityPage {
        var query: [URLQueryItem] = []
        if let limit { query.append(URLQueryItem(name: "limit", value: String(limit))) }
        if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        return try decode(ActivityPage.self, from: try await authenticated("GET", "/api/account/activity", query: query, expect: [200]))
    }

    /// Ends this session on the server and forgets it here. It is forgotten whatever the server
    /// answers; an error means the server may hold it until it expires.
    public func signOut() async throws {
        guard let session = try await loadState().session else { return }
        var failure: (any Error)?
        do {
            _ = try await call("POST", "/api/logout", session: session, expect: [204])
        } catch SiwaError.server(_, .unauthenticated, _, _) {
            // Already ended on the server: nothing left to end.
        } catch {
            failure = error
        }
        var state = try await loadState()
        if state.session?.token == session.token { state.session = nil }
        cachedAccessToken = nil
        try await save(state)
        if let failure { throw failure }
    }

    /// Deletes the account: every session ends, the server revokes Apple's tokens; the store is
    /// cleared.
    @discardableResult
    public func deleteAccount() async throws -> AccountDeletion {
        let deletion = try decode(AccountDeletion.self, from: try await authenticated("DELETE", "/api/account", expect: [202]))
        cachedAccessToken = nil
        try await save(SiwaClientState())
        return deletion
    }

    // MARK: Access tokens

    /// A JWT for the team's own services, reused until `accessTokenMargin` before it expires.
    /// Calls made while one is being fetched wait for that one.
    public func accessToken() async throws -> String {
        let session = try await requireSession()
        if let cached = cachedAccessToken, cached.sessionToken == session.token,
            now() < cached.expiresAt.addingTimeInterval(-accessTokenMargin)
        {
            return cached.token
        }
        if let fetch = accessTokenFetch, fetch.sessionToken == session.token { return try await fetch.task.value.token }
        let task = Task { try await self.fetchAccessToken(for: session) }
        accessTokenFetch = (session.token, task)
        defer { if accessTokenFetch?.sessionToken == session.token { accessTokenFetch = nil } }
        let issued = try await task.value
        // Kept only while the session it was issued for is still the stored one.
        if try await loadState().session?.token == session.token { cachedAccessToken = issued }
        return issued.token
    }

    private func fetchAccessToken(for session: StoredSession) async throws -> IssuedAccessToken {
        let answer = try decode(IssuedAccessToken.Answer.self, from: try await call("POST", "/api/token", session: session, expect: [200]))
        return IssuedAccessToken(answer, sessionToken: session.token, receivedAt: now())
    }

    // MARK: Apple's credential state

    /// Asks Apple whether the signed-in Apple ID is still authorized (call it at launch). On
    /// `revoked` or `notFound` the server session ends and the store is cleared. Nil when there
    /// is nothing to ask: no provider, no session, or a user without an Apple ID.
    @discardableResult
    public func checkCredentialState() async throws -> AppleCredentialState? {
        guard let provider = credentialStateProvider, let session = try await loadState().session, let appleUserID = session.appleUserID else {
            return nil
        }
        let answer = try await provider.credentialState(forUserID: appleUserID)
        if answer.endsSession { await endRevoked(session) }
        return answer
    }

    /// Checks the credential state each time Apple posts its credential-revoked notification,
    /// until the returned task is cancelled.
    public nonisolated func watchCredentialRevocations() -> Task<Void, Never> {
        guard let provider = credentialStateProvider else { return Task {} }
        let revocations = provider.revocations()
        return Task { [weak self] in
            for await _ in revocations {
                guard let self else { return }
                _ = try? await self.checkCredentialState()
            }
        }
    }

    /// Ends the session on the server and clears the store. The store is cleared even when the
    /// server cannot be reached: the person is signed out on this device at once, and the
    /// server hears of the revocation from Apple too (Apple's `consent-revoked` notification).
    private func endRevoked(_ session: StoredSession) async {
        _ = try? await call("POST", "/api/logout", session: session, expect: [204])
        cachedAccessToken = nil
        try? await save(SiwaClientState())
    }
}
