import CLibPQ

/// A libpq connection string (`postgres://user:password@host:5432/name?sslmode=require`, or
/// `host=… password=…`), parsed once so that a mistake in it is reported before any connection
/// is tried, and so that the password can be kept out of every message libpq writes.
struct ConnectionInfo: Sendable {
    let text: String
    /// The password as libpq reads it, and as written in a URL (percent-encoded).
    private let secrets: [String]

    init(_ text: String) throws(PostgresError) {
        let written = Self.writtenPassword(text).map { [$0] } ?? []
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &message) else {
            let reason = message.map { String(cString: $0) } ?? "out of memory"
            PQfreemem(message)
            throw PostgresError(
                code: PostgresError.connectFailedCode,
                message: "invalid connection string: " + Self.redact(reason, secrets: written + Self.keywordPasswords(text))
            )
        }
        defer { PQconninfoFree(options) }
        var parsed: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val {
                parsed.append(String(cString: value))
            }
            option += 1
        }
        self.text = text
        secrets = (parsed + written).filter { !$0.isEmpty }
    }

    /// `message` with every appearance of the password replaced.
    func redact(_ message: String) -> String {
        Self.redact(message, secrets: secrets)
    }

    private static func redact(_ message: String, secrets: [String]) -> String {
        // Longest first, so a password that contains another secret is replaced whole.
        secrets.sorted { $0.count > $1.count }.reduce(message) { $0.replacing($1, with: "***") }
    }

    /// The password of a URL's `user:password@` part, as written.
    private static func writtenPassword(_ text: String) -> String? {
        guard let scheme = text.firstRange(of: "://") else { return nil }
        let rest = text[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return nil }
        return String(userInfo[userInfo.index(after: colon)...])
    }

    /// Rough `password=…` values of a key/value string libpq could not parse: enough to keep
    /// them out of its complaint.
    private static func keywordPasswords(_ text: String) -> [String] {
        text.ranges(of: "password=").compactMap { range in
            let value = text[range.upperBound...].prefix { !$0.isWhitespace }
            return value.isEmpty ? nil : String(value.trimmingPrefix("'"))
        }
    }
}
