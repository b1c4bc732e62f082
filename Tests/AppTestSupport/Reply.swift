import JSON

/// An answer as a test reads it, whichever way it travelled: header names lower-cased.
public struct Reply: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: String

    public init(status: Int, headers: [String: String], body: String) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var json: JSONObject? { try? JSONParser.parse(body).object }
}
