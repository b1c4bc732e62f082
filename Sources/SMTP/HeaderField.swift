/// One header field, folded (RFC 5322 §2.2.3): words go on the line while it stays within 78
/// characters, and a fold (CRLF and a space) goes only between two words, so unfolding gives
/// back the words with single spaces. The words are made by the callers from checked or
/// encoded text: none holds a CR or LF.
struct HeaderField {
    static let preferredLineLength = 78

    private var bytes: [UInt8]
    private var lineLength: Int
    private var hasWords = false

    init(_ name: String) {
        bytes = Array("\(name):".utf8)
        lineLength = bytes.count
    }

    mutating func append(_ word: String) {
        let count = word.utf8.count
        // A fold needs something after it on its line (a line of only white space is not
        // allowed), and is pointless before the first word.
        if hasWords, count > 0, lineLength + 1 + count > Self.preferredLineLength {
            bytes += [0x0D, 0x0A]
            lineLength = 0
        }
        bytes.append(0x20)
        bytes += word.utf8
        lineLength += 1 + count
        hasWords = true
    }

    mutating func append(contentsOf words: [String]) {
        for word in words { append(word) }
    }

    /// The field with its CRLF.
    var rendered: [UInt8] { bytes + [0x0D, 0x0A] }
}
