import SystemThread

/// The jobs waiting for a pool worker: first in, first out, at most `capacity` of them, so that
/// an overloaded or unreachable database turns callers away at once instead of piling them up.
final class PoolQueue: @unchecked Sendable {
    // Sendable because `jobs`, `head` and `isClosed` are only touched while holding `condition`.
    private let condition = Condition()
    private var jobs: [any PoolJob] = []
    private var head = 0
    private var isClosed = false
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func submit(_ job: any PoolJob) throws(PostgresError) {
        try condition.withLock { () throws(PostgresError) in
            if isClosed { throw PostgresError.closed("the PostgreSQL pool") }
            guard jobs.count - head < capacity else {
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
            while head == jobs.count && !isClosed {
                condition.wait()
            }
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    /// Refuses new jobs; the queued ones are still handed out.
    func close() {
        condition.withLock {
            isClosed = true
            condition.broadcast()
        }
    }

    var waitingCount: Int { condition.withLock { jobs.count - head } }
}
