/// What the server's answer to `EHLO` offers (RFC 5321 §4.1.1.1): the first line greets,
/// each further line names an extension and its parameters.
struct SMTPCapabilities: Equatable {
    var startTLS = false
    /// Upper-cased SASL mechanism names from `AUTH` (and the older `AUTH=` some servers still send).
    var authMechanisms: Set<String> = []

    init() {}

    init(ehloReply reply: SMTPReply) {
        for line in reply.lines.dropFirst() {
            let words = line.uppercased().split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let keyword = words.first else { continue }
            if keyword == "STARTTLS" {
                startTLS = true
            } else if keyword == "AUTH" {
                authMechanisms.formUnion(words.dropFirst().map(String.init))
            } else if keyword.hasPrefix("AUTH=") {
                authMechanisms.formUnion([String(keyword.dropFirst(5))] + words.dropFirst().map(String.init))
            }
        }
    }
}
