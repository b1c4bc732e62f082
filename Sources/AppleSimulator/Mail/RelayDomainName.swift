/// A sending domain as a team registers it for Private Email Relay: a DNS name of letters,
/// digits and hyphens, lower-cased, without a trailing dot.
enum RelayDomainName {
    static func normalize(_ text: String) -> String? {
        let name = text.lowercased()
        guard !name.isEmpty, name.utf8.count <= 253 else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            let bytes = Array(label.utf8)
            guard !bytes.isEmpty, bytes.count <= 63, bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-"),
                  bytes.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-") })
            else { return nil }
        }
        return name
    }
}
