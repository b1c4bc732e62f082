/// Who caused an audit event: the person, Apple (server-to-server notifications), an operator
/// (the admin API, the command line), or the server itself.
public enum AuditActor: String, Sendable, CaseIterable {
    case user, apple, admin, system
}
