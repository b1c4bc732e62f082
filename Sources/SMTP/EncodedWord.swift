import WireFormat

/// RFC 2047 encoded-words for header text that is not plain ASCII (a Korean name or subject):
/// `=?UTF-8?B?…?=`, base64 of whole characters, each word at most 64 characters so that even
/// the first one fits on a 78-character line after `Subject: `. Decoders join adjacent
/// encoded-words without the space between them (§6.2), so a text can be cut anywhere
/// between two Unicode scalars.
enum EncodedWord {
    /// 39 octets are 52 base64 characters: a word of 64 with `=?UTF-8?B?` and `?=`.
    static let maxOctetsPerWord = 39

    static func encode(_ text: String) -> [String] {
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > maxOctetsPerWord {
                words.append(word(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(word(chunk)) }
        return words
    }

    private static func word(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?\(Base64.standard.encode(bytes))?="
    }
}
