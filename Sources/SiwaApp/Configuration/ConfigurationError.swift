/// A configuration problem, named by the setting's key so an operator knows what to fix.
///
/// The description is `<key>: <problem>` on one line. Problems about secret keys
/// (`private_key`, `data_key`) say what is wrong without ever repeating the value.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The setting's key as written in the JSON file (`team_id`), or `config` for the file itself.
    public let key: String
    public let problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    init(_ key: ConfigurationKey, _ problem: String) {
        self.init(key: key.rawValue, problem: problem)
    }

    public var description: String { "\(key): \(problem)" }
}

extension ConfigurationError {
    /// Quotes a (non-secret) value for an error message: escaped so the message stays one line,
    /// and shortened so a pasted blob does not flood the terminal.
    static func quote(_ value: String) -> String {
        var out = "\""
        var count = 0
        for scalar in value.unicodeScalars {
            if count == 80 {
                out += "…"
                break
            }
            count += 1
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
