/// Trimming by `Character`, so a space that starts a grapheme cluster (one with a combining
/// mark) goes whole or not at all.
extension StringProtocol {
    /// Without the leading and trailing characters for which `isTrimmed` holds.
    @inlinable
    public func trimming(while isTrimmed: (Character) -> Bool) -> SubSequence {
        var text = self[...]
        while let first = text.first, isTrimmed(first) { text = text.dropFirst() }
        while let last = text.last, isTrimmed(last) { text = text.dropLast() }
        return text
    }

    /// Without leading and trailing spaces and tabs: HTTP's optional whitespace (RFC 9110
    /// §5.6.3) around header values and list elements.
    @inlinable
    public func trimmingHTTPWhitespace() -> SubSequence {
        trimming { $0 == " " || $0 == "\t" }
    }

    /// Without leading and trailing Unicode white space, line breaks included: settings and
    /// what people type into forms. (Not named `trimmingWhitespace`: HTTPServer once had one
    /// that meant spaces and tabs only.)
    @inlinable
    public func trimmingWhitespaceAndNewlines() -> SubSequence {
        trimming(while: \.isWhitespace)
    }
}
