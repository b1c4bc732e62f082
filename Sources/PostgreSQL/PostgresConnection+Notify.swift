extension PostgresConnection {
    /// Sends `payload` to every session listening on `channel` (see `PostgresListener`). Inside
    /// a transaction it is delivered at COMMIT, and not at all on rollback: send an
    /// invalidation in the transaction that makes the change.
    public func notify(channel: String, payload: String) throws {
        // pg_notify takes the channel as a value, so nothing is spliced into SQL.
        try run("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }
}
