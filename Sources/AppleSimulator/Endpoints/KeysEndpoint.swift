import HTTPServer

/// `GET /auth/keys`: the published JWKS (APPLE.md §4).
struct KeysEndpoint: Sendable {
    let context: SimulatorContext

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        AppleResponse.json(context.store.read { $0.signingKeys.document })
    }
}
