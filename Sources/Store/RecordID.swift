import OpenSSLCrypto

/// Random identifiers and opaque tokens for the records in this module.
enum RecordID {
    /// `prefix` + 128 random bits as lower-case hex (`usr_…`, `ses_…`): unguessable, so an id
    /// leaked in a log or URL reveals nothing about other records.
    static func make(prefix: String) -> String {
        prefix + hex(SecureRandom.bytes(16))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Unpadded base64url (RFC 4648 §5), the form session tokens and nonces travel in.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            let available = min(bytes.count - index, 3)
            for position in 0...available {
                out.append(alphabet[Int((triple >> UInt32(18 - 6 * position)) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil for anything that is not canonical unpadded base64url.
    static func decode(_ text: String) -> [UInt8]? {
        var values = [UInt32]()
        values.reserveCapacity(text.utf8.count)
        for character in text.utf8 {
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(UInt32(character - UInt8(ascii: "A")))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(UInt32(character - UInt8(ascii: "a")) + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(UInt32(character - UInt8(ascii: "0")) + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var quad: UInt32 = 0
            for (offset, value) in chunk.enumerated() { quad |= value << UInt32(18 - 6 * offset) }
            let produced = chunk.count - 1
            for position in 0..<produced { out.append(UInt8((quad >> UInt32(16 - 8 * position)) & 0xFF)) }
            index += 4
        }
        // Canonical only: re-encoding must give the same text (no stray low bits).
        return encode(out) == text ? out : nil
    }
}
