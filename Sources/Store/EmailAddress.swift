/// How emails are kept and compared (docs/guides/passwords-and-email.md: "trimmed and compared case-insensitively").
public enum EmailAddress {
    /// Without surrounding white space: how an email is stored and shown.
    public static func trimmed(_ email: String) -> String {
        String(email.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// Trimmed, with ASCII letters lower-cased: the form emails are compared in. ASCII only, as
    /// SQLite's `lower()` folds (and PostgreSQL's `translate` in the index), so a comparison in
    /// SQL and one in Swift always agree.
    public static func normalized(_ email: String) -> String {
        String(String.UnicodeScalarView(trimmed(email).unicodeScalars.map { scalar in
            ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
        }))
    }

    /// The SQL of `column` folded as `normalized` folds: the expression the verified-email
    /// index of each engine is built on, so that lookups use it.
    static func folded(_ column: String, _ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "lower(\(column))"
        case .postgres: "translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
        }
    }
}
