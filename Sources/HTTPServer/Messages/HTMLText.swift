/// Text made safe to place in HTML, as element content or a quoted attribute value: the five
/// characters that could end either are replaced by entities. Used by every page served.
public enum HTMLText {
    /// Works per UTF-8 byte, never per `Character`: `"` followed by a combining mark (U+0301) is
    /// one Character that is not equal to `"`, yet the browser still ends the attribute at the
    /// quote. The five are ASCII, and an ASCII byte is never part of another scalar in UTF-8, so
    /// each is replaced wherever it stands.
    public static func escape(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): output.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): output.append(contentsOf: "&#39;".utf8)
            default: output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
