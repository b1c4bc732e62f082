import JSON

/// An answer as a test reads it, whichever way it travelled: header names lower-cased in
/// `headers` (the last of a repeated name), every field in order as sent in `fields`.
public struct Reply: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let fields: [(name: String, value: String)]
    public let body: String

    public init(status: Int, fields: [(name: String, value: String)], body: String) {
        self.status = status
        self.fields = fields
        var headers: [String: String] = [:]
        for (name, value) in fields { headers[name.lowercased()] = value }
        self.headers = headers
        self.body = body
    }

    public var json: JSONObject? { try? JSONParser.parse(body).object }
}
