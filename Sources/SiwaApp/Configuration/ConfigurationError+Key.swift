import Accounts

extension ConfigurationError {
    init(_ key: ConfigurationKey, _ problem: String) {
        self.init(key: key.rawValue, problem: problem)
    }

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
