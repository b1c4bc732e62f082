import WireFormat

/// Undoes a part's `Content-Transfer-Encoding` (RFC 2045 §6) and reads its charset: what the
/// mailbox shows is the text a person would read.
enum TransferDecoding {
    static func decode(_ body: [UInt8], encoding: String?) -> [UInt8] {
        switch encoding?.trimmed.lowercased() {
        case "quoted-printable": quotedPrintable(body, underscoreIsSpace: false)
        case "base64": base64(body) ?? body
        default: body
        }
    }

    /// Soft line breaks (`=` at a line's end) go, `=XX` becomes the byte; anything malformed
    /// is kept as it came (RFC 2045 §6.7 (1), robustness note). In RFC 2047's Q form `_` is a
    /// space.
    static func quotedPrintable(_ body: some Collection<UInt8>, underscoreIsSpace: Bool) -> [UInt8] {
        let bytes = Array(body)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "=") {
                // A soft line break, possibly with white space before its line end.
                var probe = index + 1
                while probe < bytes.count, bytes[probe] == 0x20 || bytes[probe] == 0x09 { probe += 1 }
                if probe < bytes.count, bytes[probe] == 0x0D, probe + 1 < bytes.count, bytes[probe + 1] == 0x0A {
                    index = probe + 2
                    continue
                }
                if probe < bytes.count, bytes[probe] == 0x0A {
                    index = probe + 1
                    continue
                }
                if probe == bytes.count {
                    index = probe
                    continue
                }
                if index + 2 < bytes.count, let high = Hex.value(bytes[index + 1]), let low = Hex.value(bytes[index + 2]) {
                    output.append(high << 4 | low)
                    index += 3
                    continue
                }
            }
            output.append(underscoreIsSpace && byte == UInt8(ascii: "_") ? 0x20 : byte)
            index += 1
        }
        return output
    }

    /// Base64 with its line ends and any other white space ignored; nil when it is not base64.
    static func base64(_ body: some Collection<UInt8>) -> [UInt8]? {
        let compact = body.filter { $0 != 0x0D && $0 != 0x0A && $0 != 0x20 && $0 != 0x09 }
        return Base64.standard.decode(compact)
    }

    /// Text in `charset`: UTF-8 (and US-ASCII, its subset) as such, ISO-8859-1 byte for byte,
    /// anything else read as UTF-8 with replacement characters.
    static func text(_ bytes: [UInt8], charset: String?) -> String {
        switch charset?.lowercased() {
        case "iso-8859-1", "latin1", "iso_8859-1":
            var text = ""
            text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return text
        default:
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
