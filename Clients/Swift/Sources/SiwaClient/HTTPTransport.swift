import Foundation

/// Moves one request to the server and its answer back. `URLSessionTransport` is the one apps
/// use; tests may wrap it to fail on purpose.
public protocol HTTPTransport: Sendable {
    /// Throws only when no answer arrived (any HTTP status is an answer).
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse
}

public struct HTTPTransportRequest: Sendable, Hashable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPTransportResponse: Sendable, Hashable {
    public var status: Int
    /// Names lower-cased.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.body = body
    }
}
