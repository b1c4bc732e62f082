/// Strings a client gives that are kept (`device_name`, names, an unverified email) are cut to
/// a size in bytes (docs/reference/http-api.md). A cap in Characters bounds nothing: one Character may hold any
/// number of combining marks.
package enum StoredText {
    package static let maxBytes = 256

    /// The longest prefix of `text` of at most `maxBytes` bytes of UTF-8 that ends on a scalar
    /// boundary.
    package static func cut(_ text: String, maxBytes: Int = maxBytes) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            guard bytes + size <= maxBytes else { break }
            kept.append(scalar)
            bytes += size
        }
        return String(kept)
    }
}
