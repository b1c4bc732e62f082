import Foundation

extension SiwaClient {
    func loadState() async throws -> SiwaClientState {
        do { return try await store.load() } catch let error as SiwaError { throw error } catch { throw SiwaError.store("\(error)") }
    }

    func save(_ state: SiwaClientState) async throws {
        do { try await store.save(state) } catch let error as SiwaError { throw error } catch { throw SiwaError.store("\(error)") }
    }

    func requireSession() async throws -> StoredSession {
        guard let session = try await loadState().session else { throw SiwaError.notSignedIn }
        return session
    }

    /// Keeps a new session; the pending profile of `appleUserID` is confirmed (the server has
    /// answered a sign-in of that Apple ID, so it holds the user the profile belongs to).
    func adopt(_ result: SignInResult, confirming appleUserID: String?) async throws {
        var state = try await loadState()
        state.session = StoredSession(
            token: result.session.token, expiresAt: result.session.expiresAt, userID: result.user.id, appleUserID: result.user.appleSub)
        if let appleUserID, state.pendingProfile?.appleUserID == appleUserID { state.pendingProfile = nil }
        cachedAccessToken = nil
        try await save(state)
    }

    /// Keeps the session's Apple ID in step with the user (linked, unlinked).
    func remember(_ user: User, confirming appleUserID: String?) async throws {
        var state = try await loadState()
        guard var session = state.session, session.userID == user.id else { return }
        var changed = false
        if session.appleUserID != user.appleSub {
            session.appleUserID = user.appleSub
            state.session = session
            changed = true
        }
        if let appleUserID, state.pendingProfile?.appleUserID == appleUserID {
            state.pendingProfile = nil
            changed = true
        }
        if changed { try await save(state) }
    }

    /// A request with the stored session's bearer token.
    func authenticated(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: JSONValue? = nil, expect: Set<Int>
    ) async throws -> HTTPTransportResponse {
        try await call(method, path, query: query, body: body, session: try await requireSession(), expect: expect)
    }

    /// One request. A status outside `expect` throws the server's error; `unauthenticated` for a
    /// session means the server ended it, so it is forgotten here too.
    func call(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: JSONValue? = nil, session: StoredSession? = nil,
        expect: Set<Int>
    ) async throws -> HTTPTransportResponse {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard var components = URLComponents(string: text + path) else { throw SiwaError.invalidInput("the base URL \(text) makes no request URL") }
        if !query.isEmpty { components.queryItems = query }
        guard let url = components.url else { throw SiwaError.invalidInput("the base URL \(text) makes no request URL") }
        var headers = ["Accept": "application/json"]
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = try JSONEncoder().encode(body)
        }
        if let session { headers["Authorization"] = "Bearer \(session.token)" }
        let response: HTTPTransportResponse
        do {
            response = try await transport.send(HTTPTransportRequest(method: method, url: url, headers: headers, body: data))
        } catch let error as SiwaError {
            throw error
        } catch {
            throw SiwaError.transport(error.localizedDescription)
        }
        if expect.contains(response.status) { return response }
        struct ErrorBody: Decodable {
            let error: String
            let errorDescription: String?
        }
        guard let refusal = try? APICoding.decoder().decode(ErrorBody.self, from: response.body) else {
            throw SiwaError.unexpectedResponse(status: response.status, reason: "no error code in the answer")
        }
        let error = SiwaError.server(
            status: response.status, code: ServerErrorCode(refusal.error), description: refusal.errorDescription ?? "",
            retryAfter: response.headers["retry-after"].flatMap { Int($0) })
        if let session, refusal.error == ServerErrorCode.unauthenticated.rawValue { try await forget(session) }
        throw error
    }

    private func forget(_ session: StoredSession) async throws {
        var state = try await loadState()
        guard state.session?.token == session.token else { return }
        state.session = nil
        cachedAccessToken = nil
        try await save(state)
    }

    func decode<Value: Decodable>(_ type: Value.Type, from response: HTTPTransportResponse) throws -> Value {
        do {
            return try APICoding.decoder().decode(type, from: response.body)
        } catch {
            throw SiwaError.unexpectedResponse(status: response.status, reason: "cannot read the answer: \(error)")
        }
    }

    /// A JSON object without the keys whose value is nil (the server treats absent and null
    /// alike, and absent is shorter).
    static func object(_ pairs: [String: JSONValue?]) -> JSONValue {
        .object(pairs.compactMapValues { $0 })
    }
}
