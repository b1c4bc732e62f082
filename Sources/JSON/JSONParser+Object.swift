extension JSONParser {
    /// Why a document is not the JSON object it must be (a request body), in words fit for the
    /// client that sent it: the parser's reason and where ("U+0000 in a string at byte 31"),
    /// never the document's bytes.
    public struct NotAnObject: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The object `bytes` hold, or why they hold none.
    public static func object(_ bytes: [UInt8]) throws(NotAnObject) -> JSONObject {
        let value: JSONValue
        do {
            value = try parse(bytes)
        } catch {
            throw NotAnObject(description: "the body is not JSON: \(error)")
        }
        guard let object = value.object else { throw NotAnObject(description: "the body must be a JSON object") }
        return object
    }
}
