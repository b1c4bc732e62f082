/// Why a request could not be read. Every case ends the connection after its response: once
/// framing is in doubt, nothing after it on the wire can be trusted (request smuggling).
public struct HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case badRequest
        case uriTooLong
        case headersTooLarge
        case payloadTooLarge
    }

    public let kind: Kind
    /// For people: says what was wrong without echoing the client's bytes.
    public let reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var status: Int {
        switch kind {
        case .badRequest: 400
        case .uriTooLong: 414
        case .headersTooLarge: 431
        case .payloadTooLarge: 413
        }
    }

    public var description: String { "\(status): \(reason)" }

    static func bad(_ reason: String) -> HTTPParseError { HTTPParseError(.badRequest, reason) }
}
