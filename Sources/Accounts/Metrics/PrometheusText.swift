/// Pieces of the Prometheus text exposition format (version 0.0.4).
package enum PrometheusText {
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `key="value"` pairs, with the value escaped as the format requires.
    package static func labels(_ pairs: KeyValuePairs<String, String>) -> String {
        pairs.map { "\($0.key)=\"\(escape($0.value))\"" }.joined(separator: ",")
    }

    package static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    package static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    package static func header(_ name: String, type: String, help: String, into output: inout String) {
        output += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }
}
