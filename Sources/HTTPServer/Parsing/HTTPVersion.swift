/// The two protocol versions this server speaks. Anything else is refused while parsing.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0
    case http1_1

    public var text: String {
        switch self {
        case .http1_0: "HTTP/1.0"
        case .http1_1: "HTTP/1.1"
        }
    }
}
