/// A unit of work queued for the writer thread.
protocol WriteJob: AnyObject, Sendable {
    /// Runs alone, outside any batch transaction (migrations manage their own transactions).
    var isExclusive: Bool { get }
    /// The error the body threw, once performed.
    var failure: (any Error)? { get }
    /// Runs the body on the writer connection; a batched job runs inside its own savepoint.
    func perform(on connection: Connection)
    /// Hands the outcome to the caller, exactly once. `batchError` (a failed BEGIN or COMMIT, a
    /// lost transaction) replaces a success: the job's changes were not committed.
    func complete(batchError: (any Error)?)
}

/// A write body and where its result goes.
final class PendingWrite<T>: WriteJob, @unchecked Sendable {
    // Sendable by confinement: after `Writer.submit`, only the writer thread touches `body` and
    // `outcome`, and the caller reads the result only through `deliver`, which runs last.
    let isExclusive: Bool
    private var body: ((Connection) throws -> T)?
    private let deliver: (Result<T, any Error>) -> Void
    private var outcome: Result<T, any Error>?

    init(exclusive: Bool, body: @escaping (Connection) throws -> T, deliver: @escaping (Result<T, any Error>) -> Void) {
        self.isExclusive = exclusive
        self.body = body
        self.deliver = deliver
    }

    var failure: (any Error)? {
        if case .failure(let error) = outcome { return error }
        return nil
    }

    func perform(on connection: Connection) {
        guard let body else { return }
        // Dropped as soon as it has run: `writeAndWait` passes a non-escaping closure made
        // escapable, which must not be retained once the caller resumes.
        self.body = nil
        outcome = Result {
            isExclusive ? try body(connection) : try connection.savepoint(body)
        }
    }

    func complete(batchError: (any Error)?) {
        body = nil
        let result: Result<T, any Error>
        switch (outcome, batchError) {
        case (.success, let error?): result = .failure(error)
        case (let outcome?, _): result = outcome
        case (nil, let error): result = .failure(error ?? SQLiteError.misuse("write was not run"))
        }
        outcome = nil
        deliver(result)
    }
}
