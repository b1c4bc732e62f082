import SystemThread

/// The jobs waiting for a pool worker: first in, first out, at most `capacity` of them, so that
/// an overloaded or unreachable database turns callers away at once instead of piling them up.
final class PoolQueue: @unchecked Sendable {
    // Sendable because `jobs` and `isClosed` are only touched while holding `condition`.
    private let condition = Condition()
    private var jobs = FIFO<any PoolJob>()
    private var isClosed = false
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func submit(_ job: any PoolJob) throws(PostgresError) {
        try condition.withLock { () throws(PostgresError) in
            if isClosed { throw PostgresError.closed("the PostgreSQL pool") }
            guard jobs.count < capacity else {
                throw PostgresError(
                    code: PostgresError.poolExhaustedCode,
                    message: "every PostgreSQL connection is busy and \(capacity) calls wait already"
                )
            }
            jobs.append(job)
            condition.signal()
        }
    }

    /// The next job, waiting for one; nil once closed and drained (the worker then exits).
    func next() -> (any PoolJob)? {
        condition.withLock {
            while jobs.isEmpty && !isClosed {
                condition.wait()
            }
            return jobs.popFirst()
        }
    }

    /// Refuses new jobs; the queued ones are still handed out.
    func close() {
        condition.withLock {
            isClosed = true
            condition.broadcast()
        }
    }

    var waitingCount: Int { condition.withLock { jobs.count } }
}
