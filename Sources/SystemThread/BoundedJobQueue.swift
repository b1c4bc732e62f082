/// Jobs waiting for a pool of threads: first in, first out, at most `capacity` of them, so that
/// an overloaded pool turns callers away at once instead of piling them up (the PostgreSQL pool,
/// the password-hashing pool). Worker threads loop on `next()`.
public final class BoundedJobQueue<Job: Sendable>: @unchecked Sendable {
    // Sendable because `jobs` and `isClosed` are only touched while holding `condition`.
    private let condition = Condition()
    private var jobs = FIFO<Job>()
    private var isClosed = false
    public let capacity: Int

    public enum Refusal: Error, Sendable {
        /// `capacity` jobs wait already.
        case full
        /// `close()` was called.
        case closed
    }

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    public func submit(_ job: Job) throws(Refusal) {
        try condition.withLock { () throws(Refusal) in
            if isClosed { throw .closed }
            guard jobs.count < capacity else { throw .full }
            jobs.append(job)
            condition.signal()
        }
    }

    /// The next job, waiting for one; nil once closed and drained (the worker then exits).
    public func next() -> Job? {
        condition.withLock {
            while jobs.isEmpty && !isClosed {
                condition.wait()
            }
            return jobs.popFirst()
        }
    }

    /// Refuses new jobs; the queued ones are still handed out.
    public func close() {
        condition.withLock {
            isClosed = true
            condition.broadcast()
        }
    }

    public var waitingCount: Int { condition.withLock { jobs.count } }
}
