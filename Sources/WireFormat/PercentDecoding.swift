/// RFC 3986 percent-decoding for path segments, form fields and the user info of `smtp_url`:
/// the one place where the text a client percent-encodes (paths, query strings, form bodies) is
/// decoded, so the one place that refuses U+0000 in it, which no text this server keeps may hold
/// (PostgreSQL's text cannot).
public enum PercentDecoding {
    /// The decoded text, or nil when an escape is malformed, the result is not UTF-8, or it
    /// holds U+0000 (`%00`, or the raw byte). With `plusAsSpace`, `+` means a space
    /// (application/x-www-form-urlencoded).
    public static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String? {
        decode(text.utf8, plusAsSpace: plusAsSpace)
    }

    public static func decode(_ encoded: some Collection<UInt8>, plusAsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var iterator = encoded.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(Hex.value), let low = iterator.next().flatMap(Hex.value) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusAsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        // UTF-8 encodes U+0000 only as the byte 0, and no other scalar uses it.
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
