/// What a failed delivery attempt of an outbox row led to.
public enum OutboxFailureOutcome: Sendable, Equatable {
    /// Tried again at this time.
    case retrying(at: Int64)
    /// Past its retention: no more attempts (`failed`, until an operator queues it again).
    case failed
}
