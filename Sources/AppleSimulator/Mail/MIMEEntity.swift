import WireFormat

/// One MIME entity (RFC 2045): a message or a body part, its header fields unfolded and its body
/// as received. Enough of MIME for the mailbox: multipart bodies, text parts and their
/// parameters, whatever the line ends.
struct MIMEEntity: Sendable {
    /// In order; names as sent, values unfolded and trimmed.
    let fields: [(name: String, value: String)]
    let body: [UInt8]

    /// Nesting deeper than this is not followed (a message is not a zip bomb's playground).
    static let maxDepth = 8

    init(parsing bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        var fields: [(name: String, value: String)] = []
        var index = 0
        var current: [UInt8]?
        func finish() {
            guard let line = current, let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmed
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmed
            if !name.isEmpty { fields.append((name, value)) }
        }
        while index < bytes.count {
            let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
            var line = bytes[index..<end]
            if line.last == 0x0D { line = line.dropLast() }
            index = min(end + 1, bytes.count)
            if line.isEmpty { break }
            if line.first == 0x20 || line.first == 0x09 {
                current?.append(contentsOf: line)
            } else {
                finish()
                current = Array(line)
            }
            if end == bytes.count { index = bytes.count }
        }
        finish()
        self.fields = fields
        body = index < bytes.count ? Array(bytes[index...]) : []
    }

    /// The first field named `name` (case-insensitive).
    func field(_ name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// `type/subtype`, lower-cased; `text/plain` when absent (RFC 2045 §5.2).
    var mediaType: String {
        guard let value = field("Content-Type") else { return "text/plain" }
        return value.prefix { $0 != ";" }.trimmed.lowercased()
    }

    /// A parameter of `Content-Type` (`boundary`, `charset`), unquoted.
    func contentTypeParameter(_ name: String) -> String? {
        guard let value = field("Content-Type") else { return nil }
        var rest = Substring(value)
        while let semicolon = rest.firstIndex(of: ";") {
            rest = rest[rest.index(after: semicolon)...]
            let end = Self.parameterEnd(rest)
            let parameter = rest[..<end]
            rest = rest[end...]
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let key = parameter[..<equals].trimmed.lowercased()
            var text = parameter[parameter.index(after: equals)...].trimmed
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
                text = String(text.dropFirst().dropLast()).replacingBackslashEscapes()
            }
            if key == name.lowercased() { return text }
        }
        return nil
    }

    /// Where the parameter starting `text` ends: the next `;` outside quotes.
    private static func parameterEnd(_ text: Substring) -> Substring.Index {
        var quoted = false
        var escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if character == "\\" {
                escaped = quoted
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ";", !quoted {
                return index
            }
            index = text.index(after: index)
        }
        return text.endIndex
    }

    /// The parts of a multipart body: what lies between `--boundary` lines, up to
    /// `--boundary--` (RFC 2046 §5.1.1); the CRLF before each boundary belongs to it.
    func parts() -> [MIMEEntity] {
        guard mediaType.hasPrefix("multipart/"), let boundary = contentTypeParameter("boundary"), !boundary.isEmpty else { return [] }
        let delimiter = Array("--\(boundary)".utf8)
        var parts: [MIMEEntity] = []
        var start: Int?
        var index = 0
        while index < body.count {
            let end = body[index...].firstIndex(of: 0x0A) ?? body.count
            var line = body[index..<end]
            if line.last == 0x0D { line = line.dropLast() }
            let trimmed = line.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            if trimmed.starts(with: delimiter) {
                let after = trimmed.dropFirst(delimiter.count)
                if after.isEmpty || Array(after) == Array("--".utf8) {
                    if let start {
                        // The line end before the delimiter belongs to it.
                        var stop = index
                        if stop > start, body[stop - 1] == 0x0A { stop -= 1 }
                        if stop > start, body[stop - 1] == 0x0D { stop -= 1 }
                        parts.append(MIMEEntity(parsing: body[start..<max(start, stop)]))
                    }
                    if !after.isEmpty { return parts }
                    start = min(end + 1, body.count)
                }
            }
            index = end + 1
        }
        return parts
    }
}

extension StringProtocol {
    /// Without leading and trailing white space and line ends.
    var trimmed: String { String(trimmingWhitespaceAndNewlines()) }

    fileprivate func replacingBackslashEscapes() -> String {
        var output = ""
        var escaped = false
        for character in self {
            if escaped || character != "\\" {
                output.append(character)
                escaped = false
            } else {
                escaped = true
            }
        }
        return output
    }
}
