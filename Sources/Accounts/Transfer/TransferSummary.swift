/// What a `transfer export` or `transfer import` run did, and the exit code it earns: 0 when
/// no user failed, 1 when some did or Apple stayed unavailable, 2 when Apple refused our client
/// authentication (a configuration problem), 130 when interrupted (the shell's code for
/// Ctrl-C; a later run continues).
public struct TransferSummary: Sendable, Equatable {
    public enum Stop: Sendable, Equatable {
        case interrupted
        /// Apple stayed unavailable (throttled, 5xx, unreachable) for one user past the retries.
        case appleUnavailable(String)
        /// Apple answered `invalid_client`: `team_id`, `key_id`, `private_key` or the client id.
        case clientRefused
    }

    /// Users exported (or imported) by this run.
    public var done = 0
    /// Users already done before this run.
    public var skipped = 0
    public var failed = 0
    /// Why the run ended early, if it did.
    public var stop: Stop?

    public init() {}

    public var exitCode: Int32 {
        switch stop {
        case .clientRefused?: 2
        case .interrupted?: 130
        case .appleUnavailable?: 1
        case nil: failed == 0 ? 0 : 1
        }
    }
}
