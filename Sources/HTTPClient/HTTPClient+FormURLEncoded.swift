extension HTTPClient {
    /// `application/x-www-form-urlencoded` for Apple's token and revoke endpoints: every byte
    /// but the RFC 3986 unreserved set is percent-encoded (UTF-8, upper-case hex), space as
    /// `%20`. Encoding `+`, `/` and `=` matters: client secrets and tokens contain them, and a
    /// bare `+` would arrive as a space.
    public static func formURLEncoded(_ fields: [(String, String)]) -> [UInt8] {
        var output: [UInt8] = []
        for (index, (name, value)) in fields.enumerated() {
            if index > 0 { output.append(UInt8(ascii: "&")) }
            percentEncode(name, into: &output)
            output.append(UInt8(ascii: "="))
            percentEncode(value, into: &output)
        }
        return output
    }

    private static func percentEncode(_ text: String, into output: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
    }
}
