/// Why a token was refused. The raw values are docs/reference/http-api.md's reason codes, used verbatim as
/// `error_description`, as metric labels and by `verify-token`.
public enum TokenFailure: String, Error, Sendable, CaseIterable, CustomStringConvertible {
    case malformed
    case unsupportedAlgorithm = "unsupported_alg"
    case unknownKey = "unknown_key"
    case badSignature = "bad_signature"
    case wrongIssuer = "wrong_issuer"
    case wrongAudience = "wrong_audience"
    case expired
    case issuedInFuture = "issued_in_future"
    case nonceMissing = "nonce_missing"
    case nonceMismatch = "nonce_mismatch"
    case codeMismatch = "code_mismatch"
    case replayed
    case subjectMismatch = "subject_mismatch"

    public var description: String { rawValue }
}
