/// Reads header text with RFC 2047 encoded-words (`=?UTF-8?B?…?=`, `=?UTF-8?Q?…?=`): each
/// word decoded in its charset, and the white space between two adjacent encoded-words
/// dropped (§6.2), as siwa-server cuts long names and subjects into several words.
enum EncodedWordDecoder {
    static func decode(_ text: String) -> String {
        var output = ""
        var pendingSpace = ""
        var lastWasEncoded = false
        var rest = Substring(text)
        while !rest.isEmpty {
            let space = rest.prefix { $0 == " " || $0 == "\t" }
            rest = rest.dropFirst(space.count)
            let word = rest.prefix { $0 != " " && $0 != "\t" }
            rest = rest.dropFirst(word.count)
            if word.isEmpty {
                pendingSpace += space
                continue
            }
            if let decoded = decodeWord(word) {
                if !lastWasEncoded { output += pendingSpace + space }
                output += decoded
                lastWasEncoded = true
            } else {
                output += pendingSpace + space + word
                lastWasEncoded = false
            }
            pendingSpace = ""
        }
        return output
    }

    /// One `=?charset?encoding?text?=`, or nil when `word` is not one.
    private static func decodeWord(_ word: Substring) -> String? {
        guard word.hasPrefix("=?"), word.hasSuffix("?="), word.count >= 8 else { return nil }
        let inner = word.dropFirst(2).dropLast(2)
        let pieces = inner.split(separator: "?", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, !pieces[0].isEmpty else { return nil }
        // `charset*language` (RFC 2231 §5): the language is not needed to read it.
        let charset = String(pieces[0].prefix { $0 != "*" })
        let bytes: [UInt8]?
        switch pieces[1].lowercased() {
        case "b": bytes = TransferDecoding.base64(Array(pieces[2].utf8))
        case "q": bytes = TransferDecoding.quotedPrintable(Array(pieces[2].utf8), underscoreIsSpace: true)
        default: bytes = nil
        }
        return bytes.map { TransferDecoding.text($0, charset: charset) }
    }
}
