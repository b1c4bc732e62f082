import HTTPServer

/// A request Apple refuses: its 400 with an OAuth error code and the description the simulator
/// adds to help a developer (APPLE.md §2.4).
struct AppleRefusal: Error, Sendable {
    let code: String
    let description: String

    /// `invalid_request`: the request itself is wrong.
    init(_ description: String) {
        self.init(code: "invalid_request", description)
    }

    init(code: String, _ description: String) {
        self.code = code
        self.description = description
    }

    /// `invalid_client`: client authentication failed.
    static func invalidClient(_ description: String) -> AppleRefusal { AppleRefusal(code: "invalid_client", description) }

    var response: HTTPResponse { AppleResponse.error(code, description) }
}
