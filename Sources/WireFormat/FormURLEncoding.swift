/// Writes `application/x-www-form-urlencoded` (Apple's token and revoke bodies, the simulator's
/// redirects, the web flow's query strings). Every byte but the RFC 3986 unreserved set is
/// percent-encoded (UTF-8, upper-case hex), space as `%20`. Encoding `+`, `/` and `=` matters:
/// client secrets and tokens contain them, and a bare `+` would arrive as a space.
/// Reading is HTTPServer's `FormFields`.
public enum FormURLEncoding {
    /// `name=value` pairs joined by `&`, in order.
    public static func encode(_ fields: [(String, String)]) -> [UInt8] {
        var output: [UInt8] = []
        for (index, (name, value)) in fields.enumerated() {
            if index > 0 { output.append(UInt8(ascii: "&")) }
            escape(name, into: &output)
            output.append(UInt8(ascii: "="))
            escape(value, into: &output)
        }
        return output
    }

    /// One name or value.
    public static func escape(_ text: String) -> String {
        var output: [UInt8] = []
        escape(text, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private static func escape(_ text: String, into output: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                Hex.append(byte, to: &output, uppercase: true)
            }
        }
    }
}
