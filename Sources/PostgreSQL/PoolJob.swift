/// A unit of work queued for a pool worker.
protocol PoolJob: AnyObject, Sendable {
    /// Runs the body on the worker's connection and hands the outcome to the caller.
    func run(on connection: PostgresConnection)
    /// Hands `error` to the caller without running the body (no connection could be had).
    func fail(_ error: any Error)
}

/// A `withConnection` body and where its result goes.
final class PendingJob<T>: PoolJob, @unchecked Sendable {
    // Sendable by confinement: after submission only the one worker that takes the job touches
    // it, and the caller hears only through `deliver`, called exactly once.
    private let body: (PostgresConnection) throws -> T
    private let deliver: (Result<T, any Error>) -> Void

    init(body: @escaping (PostgresConnection) throws -> T, deliver: @escaping (Result<T, any Error>) -> Void) {
        self.body = body
        self.deliver = deliver
    }

    func run(on connection: PostgresConnection) {
        var result = Result { try body(connection) }
        if connection.isInTransaction {
            // Never let one body's open transaction swallow the next caller's statements.
            _ = try? connection.execute("ROLLBACK")
            if case .success = result {
                result = .failure(PostgresError(code: "25001", message: "a withConnection body left a transaction open; it was rolled back"))
            }
        }
        deliver(result)
    }

    func fail(_ error: any Error) {
        deliver(.failure(error))
    }
}
