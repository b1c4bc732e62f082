import JSON

/// One request received on an Apple endpoint, as `GET /sim/log` lists it.
public struct SimulatorCall: Sendable {
    public let time: Int64
    /// `keys`, `authorize`, `token`, `revoke` or `usermigrationinfo`.
    public let endpoint: String
    public let method: String
    /// Query and form parameters, in the order received (repeats kept).
    public let parameterList: [(name: String, value: String)]
    public let contentType: String?
    /// The body when it was not form data (a JSON body sent by mistake).
    public let rawBody: String?
    /// The `Authorization` header as received (`Bearer …` on `usermigrationinfo`), so a test
    /// sees that a client sent it.
    public let authorization: String?

    public var parameters: [String: String] {
        Dictionary(parameterList.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    var json: JSONValue {
        .object(.compact([
            ("time", .integer(time)), ("endpoint", .string(endpoint)), ("method", .string(method)),
            ("params", .object(JSONObject(parameterList.map { (key: $0.name, value: .string($0.value)) }))),
            ("content_type", .optional(contentType)), ("body", .optional(rawBody)), ("authorization", .optional(authorization)),
        ]))
    }
}
