/// Why a call failed. A server's refusal carries its stable `error` code; the description is
/// the server's text for people. No case ever holds a token, code or password.
public enum SiwaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an error: its status, `error` code and `error_description`,
    /// and `Retry-After` in seconds when it sent one.
    case server(status: Int, code: ServerErrorCode, description: String, retryAfter: Int?)
    /// The server could not be reached, or the connection failed before an answer.
    case transport(String)
    /// The server answered something this client does not understand.
    case unexpectedResponse(status: Int, reason: String)
    /// The call needs a session and the store holds none.
    case notSignedIn
    /// What the app passed cannot be used (a return URL without a code, a base URL that makes
    /// no request URL); nothing was sent.
    case invalidInput(String)
    /// The session store could not be read or written.
    case store(String)

    /// The server's code when the server refused.
    public var code: ServerErrorCode? {
        if case .server(_, let code, _, _) = self { code } else { nil }
    }

    public var description: String {
        switch self {
        case .server(let status, let code, let description, _): "\(status) \(code): \(description)"
        case .transport(let reason): "the server could not be reached: \(reason)"
        case .unexpectedResponse(let status, let reason): "unexpected answer (\(status)): \(reason)"
        case .notSignedIn: "not signed in"
        case .invalidInput(let reason): "invalid input: \(reason)"
        case .store(let reason): "the session store failed: \(reason)"
        }
    }
}
