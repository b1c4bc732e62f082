import WireFormat

/// `application/x-www-form-urlencoded` fields (also query strings), in order: Apple's form
/// posts to the simulator and the web flow's callback and forms.
public struct FormFields: Sendable {
    public enum Failure: Error, Equatable {
        /// A bad percent escape, bytes that are not UTF-8, or a U+0000 (see `PercentDecoding`).
        case malformed
        /// OAuth forbids repeating a parameter (RFC 6749 §3.1); Apple answers `invalid_request`.
        case duplicate(String)
    }

    public private(set) var fields: [(name: String, value: String)] = []

    public init(fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    public init(parsing text: some StringProtocol) throws(Failure) {
        try self.init(parsing: Array(text.utf8))
    }

    /// Split on the bytes `&` and `=`, not on Characters: a combining mark after `=` would
    /// otherwise join it into one Character and hide the separator (found by fuzzing). Names
    /// compare byte for byte, as every other decoder of the same body does.
    /// Duplicate names are found through a set of their bytes, so a body of many short fields
    /// costs linear time.
    public init(parsing bytes: [UInt8]) throws(Failure) {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .malformed }
        var names: Set<[UInt8]> = []
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            guard let name = PercentDecoding.decode(pair[pair.startIndex..<(equals ?? pair.endIndex)], plusAsSpace: true),
                  let value = PercentDecoding.decode(equals.map { pair[($0 + 1)...] } ?? [], plusAsSpace: true)
            else { throw .malformed }
            guard names.insert(Array(name.utf8)).inserted else { throw .duplicate(name) }
            fields.append((name, value))
        }
    }

    public subscript(name: String) -> String? { fields.first { $0.name.utf8.elementsEqual(name.utf8) }?.value }

    /// The value, or nil when absent or empty: Apple treats an empty parameter as missing.
    public func nonEmpty(_ name: String) -> String? { self[name].flatMap { $0.isEmpty ? nil : $0 } }

    public func encoded() -> String {
        String(decoding: FormURLEncoding.encode(fields.map { ($0.name, $0.value) }), as: UTF8.self)
    }

    /// Whether the request says its body is form data (parameters after `;` ignored).
    public static func isFormContentType(_ value: String?) -> Bool {
        guard let value else { return false }
        let mediaType = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingHTTPWhitespace() } ?? ""
        return mediaType.lowercased() == "application/x-www-form-urlencoded"
    }
}
