/// Apple's two bearer tokens, spelled as OAuth spells them: the token response's field names
/// and `token_type_hint` (RFC 7009 §2.1). The raw value is also what the store writes in
/// `revocations.token_kind`, in sealed values' associated data and in the simulator's state
/// file, so it must never change.
public enum TokenKind: String, Sendable, CaseIterable {
    case refresh = "refresh_token"
    case access = "access_token"
}
