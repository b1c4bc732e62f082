import JSON

/// Typed reads of the simulator's own JSON (state file, control API bodies).
extension JSONObject {
    func text(_ key: String) -> String? { self[key]?.string }

    func number(_ key: String) -> Int64? { self[key]?.integer }

    /// A boolean sent either as JSON `true` or as Apple's `"true"` string.
    func flag(_ key: String) -> Bool? {
        switch self[key] {
        case .bool(let value)?: value
        case .string(let text)?: text == "true" ? true : text == "false" ? false : nil
        default: nil
        }
    }

    /// Builds an object, leaving out members whose value is nil.
    static func compact(_ members: [(String, JSONValue?)]) -> JSONObject {
        JSONObject(members.compactMap { key, value in value.map { (key: key, value: $0) } })
    }
}

extension JSONValue {
    static func optional(_ text: String?) -> JSONValue? { text.map { .string($0) } }
}
