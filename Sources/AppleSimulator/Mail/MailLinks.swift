/// The http(s) links in a message's text, in order and without repeats: what a person would
/// click in the mail (a verification link, a reset link).
enum MailLinks {
    /// Besides white space, characters that end a link in plain text or an HTML attribute.
    private static let terminators: Set<Character> = ["<", ">", "\"", "'", "`"]
    /// Punctuation that ends a sentence rather than belongs to the link.
    private static let trailing: Set<Character> = [".", ",", ";", ":", "!", "?", ")", "]", "}"]

    static func find(in text: String) -> [String] {
        var links: [String] = []
        var rest = Substring(text)
        while let start = nextStart(rest) {
            let candidate = rest[start...].prefix { !$0.isWhitespace && !terminators.contains($0) }
            rest = rest[candidate.endIndex...]
            var link = Substring(candidate)
            while let last = link.last, trailing.contains(last) { link = link.dropLast() }
            let text = String(link)
            if text != "http://", text != "https://", !links.contains(text) { links.append(text) }
        }
        return links
    }

    private static func nextStart(_ text: Substring) -> Substring.Index? {
        let http = text.firstRange(of: "http://")?.lowerBound
        let https = text.firstRange(of: "https://")?.lowerBound
        switch (http, https) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }
}
